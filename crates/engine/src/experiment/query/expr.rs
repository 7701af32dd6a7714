//! The expressions of a pgbench `\set`, the subset pglab runs: integer constants,
//! `:variables`, parentheses, unary `+`/`-`, `+ - * / %` with pgbench's precedence (which is
//! SQL's), and the functions `random(lo, hi)`, `abs(x)`, `least(…)` and `greatest(…)`. All
//! arithmetic is on 64-bit integers as pgbench does it for integers: `/` truncates toward
//! zero, `%` takes the sign of the dividend, and an overflow or a division by zero is an error
//! at run time. Anything outside the subset is refused when the script is read.

use rand::RngExt;

/// A parsed expression; variables are indexes into the script's variable table.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64),
    Var(usize),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Random(Box<Expr>, Box<Expr>),
    Abs(Box<Expr>),
    Least(Vec<Expr>),
    Greatest(Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Var(String),
    Name(String),
    Sym(char),
}

const SUBSET: &str =
    "pglab runs integers, :variables, ( ), + - * / %, random(lo, hi), abs, least and greatest";

fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() {
            let end = s[i..]
                .find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '.')
                .map_or(s.len(), |e| i + e);
            let text = &s[i..end];
            let n: i64 = text.parse().map_err(|_| {
                if text.contains(['.', 'e', 'E']) {
                    format!("{text} is not an integer ({SUBSET})")
                } else {
                    format!("{text} is not a 64-bit integer")
                }
            })?;
            out.push(Tok::Int(n));
            while chars.peek().is_some_and(|&(j, _)| j < end) {
                chars.next();
            }
        } else if c == ':' {
            chars.next();
            let start = i + 1;
            let end = s[start..]
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .map_or(s.len(), |e| start + e);
            if end == start {
                return Err(format!("':' must start a variable name ({SUBSET})"));
            }
            out.push(Tok::Var(s[start..end].to_string()));
            while chars.peek().is_some_and(|&(j, _)| j < end) {
                chars.next();
            }
        } else if c.is_alphabetic() || c == '_' {
            let end = s[i..]
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .map_or(s.len(), |e| i + e);
            out.push(Tok::Name(s[i..end].to_ascii_lowercase()));
            while chars.peek().is_some_and(|&(j, _)| j < end) {
                chars.next();
            }
        } else if "+-*/%(),".contains(c) {
            out.push(Tok::Sym(c));
            chars.next();
        } else {
            return Err(format!("'{c}' is not in the expressions {SUBSET}"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    /// Looks a variable up (or declares it), returning its index.
    var: &'a mut dyn FnMut(&str) -> Result<usize, String>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// expr := term (('+' | '-') term)*
    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(left);
            };
            let right = self.term()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    /// term := unary (('*' | '/' | '%') unary)*
    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else if self.eat('%') {
                Op::Mod
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat('-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat('+') {
            return self.unary();
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err("the expression ends too early".into());
        };
        self.pos += 1;
        match tok {
            Tok::Int(n) => Ok(Expr::Int(n)),
            Tok::Var(v) => Ok(Expr::Var((self.var)(&v)?)),
            Tok::Sym('(') => {
                let e = self.expr()?;
                if !self.eat(')') {
                    return Err("a ')' is missing".into());
                }
                Ok(e)
            }
            Tok::Name(f) => {
                if !self.eat('(') {
                    return Err(format!(
                        "'{f}' is not a value: write variables as :{f} ({SUBSET})"
                    ));
                }
                let mut args = Vec::new();
                if !self.eat(')') {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(')') {
                            break;
                        }
                        if !self.eat(',') {
                            return Err(format!("{f}(…): a ',' or ')' is missing"));
                        }
                    }
                }
                function(&f, args)
            }
            Tok::Sym(c) => Err(format!("unexpected '{c}'")),
        }
    }
}

fn function(name: &str, mut args: Vec<Expr>) -> Result<Expr, String> {
    let n = args.len();
    let want = |k: usize| -> Result<(), String> {
        if n == k {
            Ok(())
        } else {
            Err(format!("{name}() takes {k} argument(s), not {n}"))
        }
    };
    match name {
        "random" => {
            want(2)?;
            let hi = args.pop().unwrap_or(Expr::Int(0));
            let lo = args.pop().unwrap_or(Expr::Int(0));
            Ok(Expr::Random(Box::new(lo), Box::new(hi)))
        }
        "abs" => {
            want(1)?;
            Ok(Expr::Abs(Box::new(args.pop().unwrap_or(Expr::Int(0)))))
        }
        "least" | "greatest" if n == 0 => Err(format!("{name}() needs at least one argument")),
        "least" => Ok(Expr::Least(args)),
        "greatest" => Ok(Expr::Greatest(args)),
        other => Err(format!("{other}() is not supported ({SUBSET})")),
    }
}

/// Parse `text`; `var` resolves each `:name` to its index (or refuses it).
pub fn parse(
    text: &str,
    var: &mut dyn FnMut(&str) -> Result<usize, String>,
) -> Result<Expr, String> {
    let toks = tokens(text)?;
    if toks.is_empty() {
        return Err("the expression is empty".into());
    }
    let mut p = Parser { toks, pos: 0, var };
    let e = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(format!(
            "unexpected {} after the expression",
            match &p.toks[p.pos] {
                Tok::Int(n) => n.to_string(),
                Tok::Var(v) => format!(":{v}"),
                Tok::Name(n) => n.clone(),
                Tok::Sym(c) => format!("'{c}'"),
            }
        ));
    }
    Ok(e)
}

/// Evaluate with the variables' current values; `rng` draws `random`.
pub(crate) fn eval<R: rand::Rng + ?Sized>(
    e: &Expr,
    vars: &[i64],
    rng: &mut R,
) -> Result<i64, String> {
    let overflow = || "integer out of range".to_string();
    Ok(match e {
        Expr::Int(n) => *n,
        Expr::Var(i) => vars.get(*i).copied().unwrap_or(0),
        Expr::Neg(x) => eval(x, vars, rng)?.checked_neg().ok_or_else(overflow)?,
        Expr::Abs(x) => eval(x, vars, rng)?.checked_abs().ok_or_else(overflow)?,
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, vars, rng)?, eval(b, vars, rng)?);
            match op {
                Op::Add => a.checked_add(b).ok_or_else(overflow)?,
                Op::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                Op::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                Op::Div if b == 0 => return Err("division by zero".into()),
                // i64::MIN / -1 overflows: pgbench says so too.
                Op::Div => a.checked_div(b).ok_or_else(overflow)?,
                Op::Mod if b == 0 => return Err("division by zero".into()),
                // i64::MIN % -1 is 0 in pgbench.
                Op::Mod => a.checked_rem(b).unwrap_or(0),
            }
        }
        Expr::Random(lo, hi) => {
            let (lo, hi) = (eval(lo, vars, rng)?, eval(hi, vars, rng)?);
            if lo > hi {
                return Err(format!("random({lo}, {hi}): empty range"));
            }
            rng.random_range(lo..=hi)
        }
        Expr::Least(xs) | Expr::Greatest(xs) => {
            let mut vals = Vec::with_capacity(xs.len());
            for x in xs {
                vals.push(eval(x, vars, rng)?);
            }
            let pick = if matches!(e, Expr::Least(_)) {
                vals.iter().min()
            } else {
                vals.iter().max()
            };
            pick.copied().unwrap_or(0)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn run(text: &str, vars: &[(&str, i64)]) -> Result<i64, String> {
        let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
        let e = parse(text, &mut |v| {
            names
                .iter()
                .position(|n| *n == v)
                .ok_or_else(|| format!(":{v} is never set"))
        })?;
        let values: Vec<i64> = vars.iter().map(|(_, v)| *v).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        eval(&e, &values, &mut rng)
    }

    #[test]
    fn integer_arithmetic_as_pgbench_does_it() {
        assert_eq!(run("1 + 2 * 3", &[]), Ok(7));
        assert_eq!(run("(1 + 2) * 3", &[]), Ok(9));
        assert_eq!(run("-7 / 2", &[]), Ok(-3));
        assert_eq!(run("-7 % 3", &[]), Ok(-1));
        assert_eq!(run("10 - 2 - 3", &[]), Ok(5));
        assert_eq!(run(":scale * 100000", &[("scale", 3)]), Ok(300000));
        assert_eq!(
            run("abs(-4) + least(3, 1, 2) + greatest(:a, 9)", &[("a", 10)]),
            Ok(15)
        );
        assert_eq!(run("- -5", &[]), Ok(5));
        assert_eq!(run("1 / 0", &[]).unwrap_err(), "division by zero");
        assert_eq!(
            run("9223372036854775807 + 1", &[]).unwrap_err(),
            "integer out of range"
        );
    }

    #[test]
    fn random_stays_in_its_range() {
        for _ in 0..50 {
            let v = run("random(1, :n)", &[("n", 10)]).unwrap();
            assert!((1..=10).contains(&v));
        }
        assert_eq!(run("random(5, 5)", &[]), Ok(5));
        assert!(
            run("random(5, 4)", &[])
                .unwrap_err()
                .contains("empty range")
        );
    }

    #[test]
    fn outside_the_subset_is_a_sentence() {
        for (text, needle) in [
            ("1.5 * 2", "not an integer"),
            ("random_zipfian(1, 10, 2)", "not supported"),
            ("1 < 2", "'<' is not in the expressions"),
            ("random(1)", "takes 2 argument(s), not 1"),
            ("(1 + 2", "')' is missing"),
            ("1 2", "unexpected 2"),
            ("aid", "write variables as :aid"),
            (":nope + 1", ":nope is never set"),
            ("", "empty"),
            (":", "start a variable name"),
        ] {
            let e = run(text, &[]).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
