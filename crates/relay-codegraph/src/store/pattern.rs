//! The search pattern language shared by every store: case-insensitive, `*` matches any run of
//! characters, everything else is literal.

/// A compiled search pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    /// Lowercased literal pieces between `*`s.
    parts: Vec<String>,
    /// Whether the pattern contains `*` at all.
    wildcard: bool,
}

impl Glob {
    /// Compiles `pattern` (lowercased; `*` is the only metacharacter).
    pub fn new(pattern: &str) -> Self {
        let lower = pattern.to_lowercase();
        Glob {
            wildcard: lower.contains('*'),
            parts: lower.split('*').map(str::to_owned).collect(),
        }
    }

    /// Whether the pattern has no `*` (an equality match on the lowercased value).
    pub fn is_exact(&self) -> bool {
        !self.wildcard
    }

    /// The lowercased literal text of an exact pattern.
    pub fn exact_text(&self) -> Option<&str> {
        (!self.wildcard).then(|| self.parts[0].as_str())
    }

    /// The literal prefix before the first `*` (lowercased).
    pub fn literal_prefix(&self) -> &str {
        &self.parts[0]
    }

    /// Matches an already lowercased value.
    pub fn matches_lower(&self, value: &str) -> bool {
        if !self.wildcard {
            return value == self.parts[0];
        }
        let first = &self.parts[0];
        let last = &self.parts[self.parts.len() - 1];
        if !value.starts_with(first.as_str()) {
            return false;
        }
        let mut rest = &value[first.len()..];
        let middle = &self.parts[1..self.parts.len() - 1];
        for part in middle {
            match rest.find(part.as_str()) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last.as_str())
    }

    /// Matches a value of any case.
    pub fn matches(&self, value: &str) -> bool {
        self.matches_lower(&value.to_lowercase())
    }

    /// The pattern as a SQL `LIKE` / AQL `LIKE` pattern over the lowercased value: `%`, `_` and `\` are
    /// escaped with `\`, and `*` becomes `%`.
    pub fn to_like(&self) -> String {
        let escaped: Vec<String> = self.parts.iter().map(|p| escape_like(p)).collect();
        escaped.join("%")
    }
}

/// Escapes `\`, `%` and `_` for a `LIKE` pattern with `\` as the escape character.
pub fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_patterns_compare_case_insensitively() {
        let g = Glob::new("Plan");
        assert!(g.is_exact());
        assert!(g.matches("plan"));
        assert!(g.matches("PLAN"));
        assert!(!g.matches("Planner"));
    }

    #[test]
    fn wildcards_match_runs() {
        assert!(Glob::new("Plan*").matches("Planner"));
        assert!(Glob::new("*plan").matches("Replan"));
        assert!(Glob::new("*la*").matches("Planner"));
        assert!(Glob::new("P*n*r").matches("Planner"));
        assert!(!Glob::new("P*x*r").matches("Planner"));
        assert!(Glob::new("*").matches(""));
        // The first and last pieces must not overlap.
        assert!(!Glob::new("ab*ba").matches("aba"));
        assert!(Glob::new("ab*ba").matches("abba"));
    }

    #[test]
    fn like_translation_escapes_metacharacters() {
        assert_eq!(Glob::new("My_Var*").to_like(), "my\\_var%");
        assert_eq!(Glob::new("100%").to_like(), "100\\%");
        assert_eq!(Glob::new("a\\b").to_like(), "a\\\\b");
    }
}
