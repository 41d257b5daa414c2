//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use relay_tools::{ToolError, run_tool};

/// Writes `content` to `root/rel`, creating parent directories.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, content).unwrap();
    path
}

/// Runs a tool and returns its text, or the error text the agent would see.
pub fn call(root: &Path, tool: &str, args: serde_json::Value) -> Result<String, ToolError> {
    run_tool(tool, root, &args.to_string())
}

/// Runs a tool and returns the text of the result or of the error.
pub fn text(root: &Path, tool: &str, args: serde_json::Value) -> String {
    match call(root, tool, args) {
        Ok(text) => text,
        Err(error) => error.to_string(),
    }
}

/// Runs a tool that must succeed.
pub fn ok(root: &Path, tool: &str, args: serde_json::Value) -> String {
    call(root, tool, args.clone()).unwrap_or_else(|error| panic!("{tool} {args} failed: {error}"))
}

/// The body of a result without its trailing size note.
pub fn body(text: &str) -> &str {
    let index = text
        .rfind("\n[~")
        .or_else(|| text.starts_with("[~").then_some(0))
        .expect("size note");
    &text[..index]
}
