//! `pglab presets list|show|save|delete`.

use color_eyre::eyre::Result;

use crate::cli::{PresetAction, PresetSaveArgs};
use crate::experiment::ParamText;
use crate::preset::{self, Preset, PresetError};
use crate::report::grid::Grid;
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

fn preset_error(e: PresetError) -> color_eyre::eyre::Report {
    let code = match e {
        PresetError::Io { .. } => EXIT_FAILED,
        _ => EXIT_USAGE,
    };
    user_error(code, e.to_string())
}

pub async fn run(ctx: &Ctx, action: PresetAction) -> Result<i32> {
    match action {
        PresetAction::List => list(ctx),
        PresetAction::Show { name } => show(ctx, &name),
        PresetAction::Save(args) => save(ctx, args),
        PresetAction::Delete { name } => {
            let path = preset::delete(&ctx.paths, &name).map_err(preset_error)?;
            let back = if preset::shipped::text(&name).is_some() {
                " (the shipped preset of that name is in use again)"
            } else {
                ""
            };
            println!("deleted {}{back}", path.display());
            Ok(0)
        }
    }
}

fn list(ctx: &Ctx) -> Result<i32> {
    let (entries, errors) = preset::list(&ctx.paths);
    let mut g = Grid::new(
        "",
        &[
            ("name", false),
            ("experiment", false),
            ("origin", false),
            ("description", false),
        ],
    );
    for e in &entries {
        let origin = match (e.shipped, e.shadows_shipped) {
            (true, _) => "shipped".to_string(),
            (false, true) => "yours (shadows shipped)".to_string(),
            (false, false) => "yours".to_string(),
        };
        g.rows.push(vec![
            e.preset.name.clone(),
            e.preset.experiment.to_string(),
            origin,
            e.preset.description.clone(),
        ]);
    }
    print!("{}", crate::report::table::grid(&g));
    println!(
        "\nyour presets live in {} · run one with: pglab run --preset NAME",
        ctx.paths.presets_dir().display()
    );
    for e in &errors {
        eprintln!("pglab: warning: {e}");
    }
    Ok(0)
}

fn show(ctx: &Ctx, name: &str) -> Result<i32> {
    let p = preset::load(&ctx.paths, name).map_err(preset_error)?;
    let user = preset::user_path(&ctx.paths, name);
    let origin = if user.exists() {
        if preset::shipped::text(name).is_some() {
            format!("{} (shadows the shipped preset)", user.display())
        } else {
            user.display().to_string()
        }
    } else {
        "shipped with pglab".to_string()
    };
    println!("{}  ({})", p.name, p.experiment);
    println!("  {}", p.description);
    if let Some(s) = &p.source {
        println!("  source: {s}");
    }
    println!("  from:   {origin}");
    let spec = p.experiment.parse_spec(&p.params).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|(k, e)| format!("{k}: {e}")).collect();
        user_error(EXIT_USAGE, lines.join("\n"))
    })?;
    let full = spec.to_text();
    let mut g = Grid::new("", &[("parameter", false), ("value", false), ("", false)]);
    for f in p.experiment.fields() {
        // One line per parameter: SQL keeps its words, not its line breaks.
        let v = full.get(f.key).cloned().unwrap_or_default();
        let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
        let set = if p.params.contains_key(f.key) {
            ""
        } else {
            "(default)"
        };
        g.rows.push(vec![f.key.to_string(), v, set.to_string()]);
    }
    println!();
    print!("{}", crate::report::table::grid(&g));
    let cost = spec.estimate();
    println!(
        "\n≈ {} trials · {} rows · {} on disk at the peak",
        cost.trials,
        crate::measure::units::format_count(cost.rows as f64),
        crate::measure::units::format_bytes(cost.disk_bytes())
    );
    println!("run it: pglab run --preset {}", p.name);
    Ok(0)
}

fn save(ctx: &Ctx, args: PresetSaveArgs) -> Result<i32> {
    preset::check_name(&args.name).map_err(preset_error)?;
    let (experiment, mut params, description, source) = match &args.params.preset {
        Some(other) => {
            let base = preset::load(&ctx.paths, other).map_err(preset_error)?;
            if let Some(k) = args.params.experiment
                && k != base.experiment
            {
                return Err(user_error(
                    EXIT_USAGE,
                    format!(
                        "preset '{other}' is a {} preset, not {k}: drop the experiment name or pick another preset",
                        base.experiment
                    ),
                ));
            }
            (
                base.experiment,
                base.params,
                format!("{} (from {other})", base.description),
                base.source,
            )
        }
        None => match args.params.experiment {
            Some(k) => (k, ParamText::new(), String::new(), None),
            None => {
                return Err(user_error(
                    EXIT_USAGE,
                    "name an experiment or a --preset to start from: pglab presets save NAME index-build --rows 5M …",
                ));
            }
        },
    };
    params.extend(args.params.params.clone());
    // Bad values are named by the flags that gave them, and nothing is written.
    if let Err(errors) = experiment.parse_spec(&params) {
        let lines: Vec<String> = errors
            .iter()
            .map(|(k, e)| {
                if args.params.params.contains_key(k) {
                    format!("--{k}: {e}")
                } else {
                    format!("{k}: {e}")
                }
            })
            .collect();
        return Err(user_error(
            EXIT_USAGE,
            format!("{} (preset '{}' not saved)", lines.join("\n"), args.name),
        ));
    }
    let description = args.description.clone().unwrap_or_else(|| {
        if description.is_empty() {
            let set: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{experiment} {}", set.join(" "))
        } else {
            description
        }
    });
    let p = Preset {
        name: args.name.clone(),
        description,
        experiment,
        params,
        source,
    };
    let path = preset::save(&ctx.paths, &p, args.force).map_err(|e| match e {
        PresetError::Exists { .. } => user_error(EXIT_USAGE, format!("{e} (pass --force)")),
        other => preset_error(other),
    })?;
    println!("saved {}", path.display());
    if preset::shipped::text(&p.name).is_some() {
        println!(
            "note: it shadows the shipped preset '{}'; delete yours to get that back",
            p.name
        );
    }
    Ok(0)
}
