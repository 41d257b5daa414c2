//! Small tree-sitter helpers shared by the extractors: lines, text, declaration headers, and
//! field ids and node kinds from per-grammar tables. Nothing here knows a language's facts, so
//! the extractors depend on this module without depending on the per-file facts.

use std::borrow::Borrow;
use std::sync::OnceLock;

use tree_sitter::Node;

/// 1-based first line of a node.
pub(crate) fn line(node: Node<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

/// 1-based last line of a node.
pub(crate) fn end_line(node: Node<'_>) -> u32 {
    let end = node.end_position();
    // A node ending at column 0 ends on the previous line (trailing newline).
    if end.column == 0 && end.row > node.start_position().row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// Source text of a node (empty if it is not valid UTF-8).
pub(crate) fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// Text with whitespace runs collapsed to one space, cut at `max` characters.
pub(crate) fn collapse(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        if out.len() >= max {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// The declaration header: source from the start of `decl` up to (not including) `body`.
pub(crate) fn header(decl: Node<'_>, body: Option<Node<'_>>, src: &[u8]) -> String {
    let end = body.map_or(decl.end_byte(), |b| b.start_byte());
    let raw =
        std::str::from_utf8(&src[decl.start_byte()..end.max(decl.start_byte())]).unwrap_or("");
    collapse(raw.trim_end().trim_end_matches(':').trim_end(), 240)
}

/// Counts lines of a source buffer.
pub(crate) fn count_lines(src: &[u8]) -> u32 {
    let newlines = src.iter().filter(|&&b| b == b'\n').count() as u32;
    if src.last().is_some_and(|&b| b != b'\n') {
        newlines + 1
    } else {
        newlines
    }
}

/// The id of field `$name` in the grammar of `$node`, looked up once per call site (a lookup by
/// name compares the name with every field name of the grammar). A call site must only ever see
/// nodes of one grammar, which holds because the extractors are per language.
macro_rules! field_id {
    ($node:expr, $name:literal) => {{
        static ID: std::sync::OnceLock<Option<std::num::NonZeroU16>> = std::sync::OnceLock::new();
        let node: tree_sitter::Node<'_> = $node;
        *ID.get_or_init(|| node.language().field_id_for_name($name))
    }};
}

/// `$node.child_by_field_name($name)` with the field id cached ([`field_id`]).
macro_rules! field {
    ($node:expr, $name:literal) => {{
        let node: tree_sitter::Node<'_> = $node;
        match $crate::index::syntax::field_id!(node, $name) {
            Some(id) => node.child_by_field_id(id.get()),
            None => None,
        }
    }};
}

pub(crate) use {field, field_id};

/// Kind names by kind id of one grammar (`Node::kind` measures and validates a C string on every
/// call; the extractors ask for the kind of nearly every node, several times).
fn kind_names(cell: &'static OnceLock<Vec<Box<str>>>, node: Node<'_>) -> &'static [Box<str>] {
    cell.get_or_init(|| {
        let lang = node.language();
        (0..lang.node_kind_count())
            .map(|id| lang.node_kind_for_id(id as u16).unwrap_or("").into())
            .collect()
    })
}

/// `node.kind()` for a node of the Go grammar.
pub(crate) fn go_kind<'t>(node: impl Borrow<Node<'t>>) -> &'t str {
    let node = *node.borrow();
    static NAMES: OnceLock<Vec<Box<str>>> = OnceLock::new();
    // Ids past the table (`ERROR`) are named by tree-sitter itself.
    match kind_names(&NAMES, node).get(usize::from(node.kind_id())) {
        Some(name) => name,
        None => node.kind(),
    }
}

/// `node.kind()` for a node of the Python grammar.
pub(crate) fn py_kind<'t>(node: impl Borrow<Node<'t>>) -> &'t str {
    let node = *node.borrow();
    static NAMES: OnceLock<Vec<Box<str>>> = OnceLock::new();
    match kind_names(&NAMES, node).get(usize::from(node.kind_id())) {
        Some(name) => name,
        None => node.kind(),
    }
}
