//! libpq's connection service file: `service=NAME` (or `PGSERVICE`) names a `[NAME]` section
//! of `pg_service.conf` whose `key=value` lines fill in what the connection string leaves
//! out (before the environment, as libpq does). The file is the one `PGSERVICEFILE` names,
//! else `~/.pg_service.conf`; a service it lacks is looked up in `pg_service.conf` under
//! `PGSYSCONFDIR` (else the system's: `/etc/postgresql-common` on Debian, `/etc`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::TargetError;
use super::conninfo::Env;

/// The files to look in, in order.
fn files(env: &dyn Env) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match env.var("PGSERVICEFILE") {
        Some(f) => out.push(PathBuf::from(f)),
        None => {
            if let Some(home) = env
                .var("HOME")
                .map(PathBuf::from)
                .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
            {
                out.push(home.join(".pg_service.conf"));
            }
        }
    }
    match env.var("PGSYSCONFDIR") {
        Some(d) => out.push(Path::new(&d).join("pg_service.conf")),
        None => {
            out.push(PathBuf::from("/etc/postgresql-common/pg_service.conf"));
            out.push(PathBuf::from("/etc/pg_service.conf"));
        }
    }
    out
}

/// The section `[name]` of a service file's text: None when it has none.
pub(crate) fn section(
    text: &str,
    name: &str,
    file: &Path,
) -> Result<Option<BTreeMap<String, String>>, TargetError> {
    let mut found: Option<BTreeMap<String, String>> = None;
    let mut current = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[') {
            if found.is_some() && current {
                break;
            }
            current = s.strip_suffix(']').map(str::trim) == Some(name);
            if current {
                found = Some(BTreeMap::new());
            }
            continue;
        }
        if !current {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(TargetError::BadConninfo(format!(
                "{} line {}: '{line}' is not key=value (a service file has [name] sections of key=value lines)",
                file.display(),
                i + 1
            )));
        };
        let k = k.trim();
        if k == "service" {
            return Err(TargetError::BadConninfo(format!(
                "{} line {}: a service cannot name another service",
                file.display(),
                i + 1
            )));
        }
        if let Some(m) = found.as_mut() {
            m.entry(k.to_string())
                .or_insert_with(|| v.trim().to_string());
        }
    }
    Ok(found)
}

/// The settings of service `name`: from the first file that has it; a sentence naming the
/// files looked in when none does.
pub(crate) fn lookup(name: &str, env: &dyn Env) -> Result<BTreeMap<String, String>, TargetError> {
    let candidates = files(env);
    for f in &candidates {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if let Some(s) = section(&text, name, f)? {
            return Ok(s);
        }
    }
    Err(TargetError::BadConninfo(format!(
        "service '{name}' is not defined in {} (set PGSERVICEFILE to the pg_service.conf that has it)",
        candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" or ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# comment\n[other]\nhost=x\n\n[prod]\nhost = db1.example.com\nport=5433\n  dbname=sales\n# note\n[later]\nhost=y\n";

    #[test]
    fn a_section_is_read_with_its_keys_only() {
        let s = section(FILE, "prod", Path::new("f")).unwrap().unwrap();
        assert_eq!(s["host"], "db1.example.com");
        assert_eq!(s["port"], "5433");
        assert_eq!(s["dbname"], "sales");
        assert_eq!(s.len(), 3);
        assert_eq!(section(FILE, "nope", Path::new("f")).unwrap(), None);
    }

    #[test]
    fn bad_lines_are_a_sentence() {
        let e = section("[a]\nhost\n", "a", Path::new("/x/pg_service.conf")).unwrap_err();
        assert!(e.to_string().contains("/x/pg_service.conf line 2"), "{e}");
        assert!(section("[a]\nservice=b\n", "a", Path::new("f")).is_err());
    }

    #[test]
    fn the_user_file_then_the_system_file() {
        let dir = std::env::temp_dir().join(format!("pglab-service-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sys")).unwrap();
        std::fs::write(dir.join("user.conf"), "[a]\nport=1\n").unwrap();
        std::fs::write(
            dir.join("sys/pg_service.conf"),
            "[a]\nport=2\n[b]\nport=3\n",
        )
        .unwrap();
        let user = dir.join("user.conf").to_string_lossy().into_owned();
        let sys = dir.join("sys").to_string_lossy().into_owned();
        let env: BTreeMap<&str, &str> = BTreeMap::from([
            ("PGSERVICEFILE", user.as_str()),
            ("PGSYSCONFDIR", sys.as_str()),
        ]);
        assert_eq!(lookup("a", &env).unwrap()["port"], "1");
        assert_eq!(lookup("b", &env).unwrap()["port"], "3");
        let e = lookup("c", &env).unwrap_err().to_string();
        assert!(
            e.contains("service 'c' is not defined in") && e.contains("user.conf"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn resolve_takes_the_string_then_the_service_then_the_environment() {
        use crate::server::conninfo::{SessionAttrs, SslMode, env_names_target, resolve};
        let f = std::env::temp_dir().join(format!("pglab-svc-{}.conf", std::process::id()));
        std::fs::write(
            &f,
            "[prod]\nhost=db1,db2\nport=5433\ndbname=sales\nsslmode=require\ntarget_session_attrs=primary\nsslcert=/etc/c.crt\n",
        )
        .unwrap();
        let file = f.to_string_lossy().into_owned();
        let env: BTreeMap<&str, &str> = BTreeMap::from([
            ("PGSERVICEFILE", file.as_str()),
            ("PGPORT", "7777"),
            ("PGUSER", "bob"),
            ("PGSSLKEY", "/etc/c.key"),
        ]);
        let p = resolve(Some("service=prod dbname=other"), &env).unwrap();
        assert_eq!(p.hosts, ["db1", "db2"]);
        assert_eq!(p.port, 5433, "the service before the environment");
        assert_eq!(p.dbname, "other", "the string before the service");
        assert_eq!(p.user, "bob", "the environment fills what is left");
        assert_eq!(p.sslmode, SslMode::Require);
        assert_eq!(p.target_session_attrs, SessionAttrs::Primary);
        assert_eq!(p.sslcert.as_deref(), Some(Path::new("/etc/c.crt")));
        assert_eq!(p.sslkey.as_deref(), Some(Path::new("/etc/c.key")));
        let mut by_env = env.clone();
        by_env.insert("PGSERVICE", "prod");
        assert!(env_names_target(&by_env));
        assert_eq!(resolve(None, &by_env).unwrap().dbname, "sales");
        let e = resolve(Some("service=nope"), &env).unwrap_err().to_string();
        assert!(e.contains("service 'nope' is not defined in"), "{e}");
        let p = resolve(
            Some("postgresql://u@h1,h2/db?target_session_attrs=prefer-standby&sslcrl=/x.crl&passfile=/p"),
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(p.hosts, ["h1", "h2"]);
        assert_eq!(p.target_session_attrs, SessionAttrs::PreferStandby);
        assert_eq!(p.sslcrl.as_deref(), Some(Path::new("/x.crl")));
        assert_eq!(p.passfile.as_deref(), Some(Path::new("/p")));
        let e = resolve(Some("target_session_attrs=master"), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("not one of any, read-write"), "{e}");
        let _ = std::fs::remove_file(&f);
    }
}
