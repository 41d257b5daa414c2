//! [`ToolName`]: the one list of the explore tools' names, as the LLM calls them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Declares [`ToolName`] from one list, so its variants, [`ToolName::ALL`] and the names cannot
/// drift apart: a new tool is one line here.
macro_rules! tool_names {
    ($($(#[$doc:meta])* $variant:ident => $name:literal),+ $(,)?) => {
        /// An explore tool the agent can call, by the name the LLM sees (`grep`, `read`, …).
        ///
        /// The code tools of this crate and the code graph's tool (run by the agent's toolbox from
        /// relay-codegraph) are named here only: elsewhere a tool is `ToolName::X`, never a string
        /// literal (the tidy test checks it).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ToolName {
            $($(#[$doc])* #[serde(rename = $name)] $variant),+
        }

        impl ToolName {
            /// Every tool name, the code tools in the order the registry offers them.
            pub const ALL: [ToolName; [$($name),+].len()] = [$(ToolName::$variant),+];

            /// The name as the LLM calls the tool.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ToolName::$variant => $name),+
                }
            }
        }
    };
}

tool_names! {
    Grep => "grep",
    Read => "read",
    Glob => "glob",
    Tree => "tree",
    Codegraph => "codegraph",
    History => "history",
}

impl fmt::Display for ToolName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A name that is no explore tool's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{0}`")]
pub struct UnknownToolName(pub String);

impl FromStr for ToolName {
    type Err = UnknownToolName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ToolName::ALL
            .into_iter()
            .find(|tool| tool.as_str() == name)
            .ok_or_else(|| UnknownToolName(name.to_owned()))
    }
}

impl PartialEq<ToolName> for str {
    fn eq(&self, tool: &ToolName) -> bool {
        self == tool.as_str()
    }
}

impl PartialEq<ToolName> for String {
    fn eq(&self, tool: &ToolName) -> bool {
        self == tool.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_serde() {
        for tool in ToolName::ALL {
            assert_eq!(tool.as_str().parse(), Ok(tool));
            assert_eq!(tool.to_string(), tool.as_str());
            let json = serde_json::to_string(&tool).unwrap();
            assert_eq!(json, format!("\"{}\"", tool.as_str()));
            assert_eq!(serde_json::from_str::<ToolName>(&json).unwrap(), tool);
        }
        assert_eq!(
            "fly".parse::<ToolName>(),
            Err(UnknownToolName("fly".to_owned()))
        );
        assert!("Grep".parse::<ToolName>().is_err());
    }
}
