//! Integer expressions inside `{…}`: `+ - * / %`, parentheses, integer literals and
//! variables (parameters, the instance index `n`, `for` variables).

use std::collections::BTreeMap;

/// Integer variables by name.
pub type Vars = BTreeMap<String, i64>;

/// The variables in scope of an expression: the workload's integer parameters, shared and
/// never copied (a workload may declare thousands and lower thousands of programs), and the
/// bindings over them — the instance index `n`, `for` and `poll` variables — which shadow a
/// parameter of the same name.
#[derive(Clone, Debug)]
pub struct Env<'p> {
    params: &'p Vars,
    locals: Vars,
}

impl<'p> Env<'p> {
    /// The parameters `params` and no binding.
    pub fn new(params: &'p Vars) -> Self {
        Env { params, locals: Vars::new() }
    }
    pub fn get(&self, name: &str) -> Option<i64> {
        self.locals.get(name).or_else(|| self.params.get(name)).copied()
    }
    pub fn contains(&self, name: &str) -> bool {
        self.locals.contains_key(name) || self.params.contains_key(name)
    }
    /// The binding of `name` (not a parameter).
    pub fn binding(&self, name: &str) -> Option<i64> {
        self.locals.get(name).copied()
    }
    /// Binds `name` to `v`; returns the binding it replaced (not a parameter it shadows),
    /// for [`Env::restore`].
    pub fn bind(&mut self, name: &str, v: i64) -> Option<i64> {
        self.locals.insert(name.to_string(), v)
    }
    /// Puts back the binding [`Env::bind`] returned (`None`: `name` is unbound again, and a
    /// parameter of that name visible again).
    pub fn restore(&mut self, name: &str, prev: Option<i64>) {
        match prev {
            Some(v) => self.locals.insert(name.to_string(), v),
            None => self.locals.remove(name),
        };
    }
    /// Every name in scope, sorted.
    fn names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.params.keys().chain(self.locals.keys()).map(String::as_str).collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Deepest nesting of parentheses and unary minus in one expression. The evaluator
/// recurses once per level; 30 000 levels overflowed the stack.
pub const MAX_EXPR_DEPTH: usize = 64;

pub fn eval(src: &str, env: &Env) -> Result<i64, String> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, pos: 0, env, depth: 0 };
    let v = p.sum()?;
    if p.pos != p.toks.len() {
        return Err(format!("unexpected `{}` in expression `{src}`", p.toks[p.pos]));
    }
    Ok(v)
}

/// Variables an expression mentions (to know whether it depends on the instance).
pub fn variables(src: &str) -> Vec<String> {
    tokenize(src)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .collect()
}

fn tokenize(src: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let s = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(cs[s..i].iter().collect());
        } else if "+-*/%()".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else {
            return Err(format!("unexpected character `{c}` in expression `{src}`"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<String>,
    pos: usize,
    env: &'a Env<'a>,
    /// Current nesting of `(` and unary `-`.
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }
    fn sum(&mut self) -> Result<i64, String> {
        let mut v = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let add = op == "+";
            self.pos += 1;
            let r = self.product()?;
            v = if add { v.checked_add(r) } else { v.checked_sub(r) }.ok_or("arithmetic overflow")?;
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<i64, String> {
        let mut v = self.atom()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            let op = op.to_string();
            self.pos += 1;
            let r = self.atom()?;
            v = match op.as_str() {
                "*" => v.checked_mul(r).ok_or("arithmetic overflow")?,
                _ if r == 0 => return Err("division by zero".into()),
                "/" => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn atom(&mut self) -> Result<i64, String> {
        let t = self.peek().ok_or("expression ends too early")?.to_string();
        self.pos += 1;
        if t == "(" || t == "-" {
            if self.depth >= MAX_EXPR_DEPTH {
                return Err(format!("expression nested more than {MAX_EXPR_DEPTH} levels deep"));
            }
            self.depth += 1;
            let v = self.nested(t == "(");
            self.depth -= 1;
            return v;
        }
        if t.starts_with(|c: char| c.is_ascii_digit()) {
            return t.parse().map_err(|_| format!("bad number `{t}`"));
        }
        self.env.get(&t).ok_or_else(|| format!("unknown variable `{t}` (known here: {})", self.env.names().join(", ")))
    }
}

impl Parser<'_> {
    /// A parenthesised sum (`paren`) or a negated atom, one nesting level down.
    fn nested(&mut self, paren: bool) -> Result<i64, String> {
        if !paren {
            return self.atom()?.checked_neg().ok_or_else(|| "arithmetic overflow".into());
        }
        let v = self.sum()?;
        if self.peek() != Some(")") {
            return Err("missing `)`".into());
        }
        self.pos += 1;
        Ok(v)
    }
}

/// Expands `{expr}` segments of a name template: `"p.{n / 20}"` → `"p.3"`.
pub fn expand(template: &str, env: &Env) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or_else(|| format!("unclosed `{{` in `{template}`"))? + open;
        out.push_str(&eval(&rest[open + 1..close], env)?.to_string());
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn evaluates_with_precedence_and_vars() {
        let params = Vars::from([("r".to_string(), 1), ("k".to_string(), 5)]);
        let mut env = Env::new(&params);
        env.bind("n", 47);
        assert_eq!(env.bind("r", 3), None, "a parameter is not a binding");
        assert_eq!(eval("(n / 20) * 20 + r", &env), Ok(43));
        assert_eq!(eval("-2 + 3 * 4 % 5", &env), Ok(0));
        assert!(eval("x + 1", &env).unwrap_err().contains("unknown variable `x`"));
        assert!(eval("1 / 0", &env).is_err());
        assert_eq!(expand("p.{n % 20}.x", &env), Ok("p.7.x".into()));
        // A binding shadows the parameter of its name until it is restored.
        assert_eq!(eval("r + k", &env), Ok(8));
        assert!(eval("x", &env).unwrap_err().contains("(known here: k, n, r)"));
        env.restore("r", None);
        assert_eq!(eval("r + k", &env), Ok(6));
    }
    #[test]
    fn nesting_is_limited_not_a_stack_overflow() {
        let none = Vars::new();
        let env = Env::new(&none);
        let deep = |d: usize| format!("{}1{}", "(".repeat(d), ")".repeat(d));
        assert_eq!(eval(&deep(MAX_EXPR_DEPTH), &env), Ok(1));
        assert!(eval(&deep(MAX_EXPR_DEPTH + 1), &env).unwrap_err().contains("nested more than 64"));
        assert!(eval(&deep(30_000), &env).is_err());
        assert!(eval(&"-".repeat(30_000), &env).unwrap_err().contains("nested"));
        assert_eq!(eval("--3", &env), Ok(3));
        assert!(eval("-(0 - 9223372036854775807 - 1)", &env).unwrap_err().contains("overflow"));
    }
}
