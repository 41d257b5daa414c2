//! A set of names tested against many identifiers: an incremental update asks which files mention
//! a changed name (the Go dependents, the Python changed-name pass), and most identifiers it
//! compares are not wanted.

use std::collections::BTreeSet;

/// A set of names, with their lengths as a cheap first test (the lengths are stored inline, the
/// names' bytes are not).
pub(crate) struct Wanted<'a> {
    names: &'a BTreeSet<String>,
    /// Bit `n` is set when a name of `n` bytes is wanted; names of 128 bytes or more set no bit
    /// and are always looked up.
    lengths: u128,
}

impl<'a> Wanted<'a> {
    pub(crate) fn new(names: &'a BTreeSet<String>) -> Self {
        let lengths = names
            .iter()
            .fold(0u128, |bits, name| bits | length_bit(name));
        Wanted { names, lengths }
    }

    /// The wanted names.
    pub(crate) fn names(&self) -> &'a BTreeSet<String> {
        self.names
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        let bit = length_bit(name);
        (bit == 0 || self.lengths & bit != 0) && self.names.contains(name)
    }
}

fn length_bit(name: &str) -> u128 {
    1u128.checked_shl(name.len() as u32).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_exactly_the_names_short_and_long() {
        let long = "x".repeat(200);
        let names: BTreeSet<String> = ["run".to_owned(), long.clone()].into_iter().collect();
        let wanted = Wanted::new(&names);
        assert!(wanted.contains("run"));
        assert!(wanted.contains(&long));
        assert!(!wanted.contains("ran"), "same length, other name");
        assert!(!wanted.contains("runs"));
        assert!(!wanted.contains(&"x".repeat(199)));
        assert!(
            !wanted.contains(&"y".repeat(200)),
            "past the length bits, other name"
        );
    }
}
