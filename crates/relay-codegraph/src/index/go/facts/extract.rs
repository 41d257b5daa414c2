//! Declarations of one parsed Go file into [`GoFile`] facts.

use std::collections::HashMap;

use tree_sitter::Node;

use super::body::BodyBuilder;
use super::{
    GBind, GType, GoBody, GoField, GoFile, GoFuncDecl, GoIfaceMethod, GoImport, GoTypeDecl,
    GoTypeKind, GoValueDecl,
};
use crate::index::syntax::{end_line, field, go_kind, header, line, text};

/// Extracts the facts of one parsed Go file. `pkg_path` is the directory's import path (`None`
/// outside any module at the repository root, where the package name is used).
pub(crate) fn extract(
    root: Node<'_>,
    src: &[u8],
    pkg_path: Option<&str>,
    file_stem: Option<&str>,
) -> GoFile {
    let mut file = GoFile::default();
    let mut cursor = root.walk();
    let children: Vec<Node<'_>> = root.named_children(&mut cursor).collect();
    let prev = PrevSiblings::new(&[root]);
    for node in &children {
        if go_kind(node) == "package_clause" {
            if let Some(name) = node.named_child(0) {
                file.pkg_name = text(name, src).to_owned();
            }
            file.pkg_line = line(*node);
            file.pkg_doc = doc_comment(*node, src, &prev);
            break;
        }
    }
    let mut base = pkg_path.map_or_else(|| file.pkg_name.clone(), str::to_owned);
    // A `//go:build ignore` file (a generator run with `go run x.go`) is not part of its
    // directory's package: it is its own program, named after the file.
    if is_build_ignored(root, src)
        && let Some(stem) = file_stem
    {
        base = format!("{base}/{stem}");
    }
    file.pkg_path = if file.pkg_name.ends_with("_test")
        && !base.ends_with("_test")
        && base.rsplit('/').next() != Some(file.pkg_name.as_str())
    {
        format!("{base}_test")
    } else {
        base
    };
    // Body 0: package-level initializers.
    file.bodies.push(GoBody {
        owner: file.pkg_path.clone(),
        ..GoBody::default()
    });
    for node in children {
        match go_kind(node) {
            "import_declaration" => imports(node, src, &mut file.imports),
            "function_declaration" | "method_declaration" => function(node, src, &prev, &mut file),
            "type_declaration" => {
                let spec_siblings = PrevSiblings::new(&[node]);
                let mut c = node.walk();
                for spec in node.named_children(&mut c) {
                    if matches!(go_kind(spec), "type_spec" | "type_alias") {
                        type_spec(spec, node, src, &prev, &spec_siblings, &mut file);
                    }
                }
            }
            "const_declaration" | "var_declaration" => values(node, src, &prev, &mut file),
            _ => {}
        }
    }
    file.shrink();
    file
}

impl GoFile {
    /// Gives back the spare capacity of the facts' vectors (they are kept for the life of the
    /// index, and a vector grown by pushes holds up to twice what it uses).
    fn shrink(&mut self) {
        self.imports.shrink_to_fit();
        self.types.shrink_to_fit();
        self.funcs.shrink_to_fit();
        self.values.shrink_to_fit();
        self.bodies.shrink_to_fit();
        for body in &mut self.bodies {
            body.exprs.shrink_to_fit();
            body.bindings.shrink_to_fit();
            body.refs.shrink_to_fit();
        }
    }
}

/// Whether the file's build constraint (before the package clause) contains `ignore`.
fn is_build_ignored(root: Node<'_>, src: &[u8]) -> bool {
    let mut cursor = root.walk();
    for node in root.children(&mut cursor) {
        if go_kind(node) != "comment" {
            return false;
        }
        let t = text(node, src);
        let constraint = t
            .strip_prefix("//go:build")
            .or_else(|| t.strip_prefix("// +build"));
        if let Some(expr) = constraint
            && expr
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .any(|term| term == "ignore")
        {
            return true;
        }
    }
    false
}

fn imports(node: Node<'_>, src: &[u8], out: &mut Vec<GoImport>) {
    let Some(_depth) = crate::index::depth::Depth::enter() else {
        return;
    };
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        match go_kind(child) {
            "import_spec" => {
                let Some(path) = field!(child, "path") else {
                    continue;
                };
                let path = text(path, src).trim_matches(['"', '`']).to_owned();
                if path.is_empty() {
                    continue;
                }
                let alias = field!(child, "name").map(|n| text(n, src).to_owned());
                out.push(GoImport {
                    alias,
                    path,
                    line: line(child),
                });
            }
            "import_spec_list" => imports(child, src, out),
            _ => {}
        }
    }
}

/// Previous siblings of the children of some nodes: `Node::prev_sibling` finds the parent from
/// the root and walks from the parent's first child, which is quadratic over the declarations
/// of a file.
struct PrevSiblings<'t>(HashMap<usize, Node<'t>>);

impl<'t> PrevSiblings<'t> {
    fn new(parents: &[Node<'t>]) -> Self {
        let mut map = HashMap::new();
        for parent in parents {
            let mut cursor = parent.walk();
            let mut last: Option<Node<'t>> = None;
            for node in parent.children(&mut cursor) {
                if let Some(last) = last {
                    map.insert(node.id(), last);
                }
                last = Some(node);
            }
        }
        PrevSiblings(map)
    }

    fn of(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.0.get(&node.id()) {
            Some(prev) => Some(*prev),
            None => node.prev_sibling(),
        }
    }
}

/// First line of the `//` or `/* */` comment block directly above `node`.
fn doc_comment<'t>(node: Node<'t>, src: &[u8], siblings: &PrevSiblings<'t>) -> Option<String> {
    let mut first = None;
    let mut expect_line = node.start_position().row;
    let mut prev = siblings.of(node);
    while let Some(p) = prev {
        if go_kind(p) != "comment" || p.end_position().row + 1 < expect_line {
            break;
        }
        if p.end_position().row >= node.start_position().row {
            break;
        }
        first = Some(p);
        expect_line = p.start_position().row;
        prev = siblings.of(p);
    }
    let raw = text(first?, src);
    let stripped = raw
        .strip_prefix("//")
        .or_else(|| raw.strip_prefix("/*"))
        .unwrap_or(raw);
    let first_line = stripped
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?
        .trim_end_matches("*/")
        .trim();
    (!first_line.is_empty()).then(|| first_line.to_owned())
}

fn function<'t>(node: Node<'t>, src: &[u8], siblings: &PrevSiblings<'t>, file: &mut GoFile) {
    let Some(name_node) = field!(node, "name") else {
        return;
    };
    let name = text(name_node, src).to_owned();
    if name.is_empty() || name == "_" {
        return;
    }
    let body = field!(node, "body");
    let mut builder = BodyBuilder::new(src);
    let mut recv = None;
    builder.push_scope();
    if let Some(receiver) = field!(node, "receiver") {
        let mut c = receiver.walk();
        if let Some(param) = receiver
            .named_children(&mut c)
            .find(|p| go_kind(p) == "parameter_declaration")
            && let Some(ty) = field!(param, "type")
        {
            let (base, type_params) = receiver_base(ty, src);
            for tp in type_params {
                builder.declare(tp, GBind::TypeName);
            }
            if let Some(base) = base {
                let recv_ty = builder.ty(ty);
                if let Some(pname) = field!(param, "name") {
                    builder.declare(text(pname, src).to_owned(), GBind::Declared(recv_ty));
                }
                recv = Some(base);
            }
        }
        if recv.is_none() {
            return;
        }
    }
    let owner = match &recv {
        Some(r) => format!("{}.{r}.{name}", file.pkg_path),
        None => format!("{}.{name}", file.pkg_path),
    };
    if let Some(tps) = field!(node, "type_parameters") {
        builder.type_params(tps);
    }
    let sig = builder.function_signature(field!(node, "parameters"), field!(node, "result"));
    if let Some(body) = body {
        builder.stmt(body);
    }
    builder.pop_scope();
    file.bodies.push(builder.finish(owner));
    file.funcs.push(GoFuncDecl {
        name,
        recv,
        line: line(node),
        end_line: end_line(node),
        signature: header(node, body, src),
        doc: doc_comment(node, src, siblings),
        sig,
    });
}

/// Base type name of a receiver type (`*List[T]` → `List`) and its type parameter names.
fn receiver_base(ty: Node<'_>, src: &[u8]) -> (Option<String>, Vec<String>) {
    let Some(_depth) = crate::index::depth::Depth::enter() else {
        return (None, Vec::new());
    };
    match go_kind(ty) {
        "pointer_type" | "parenthesized_type" => match ty.named_child(0) {
            Some(inner) => receiver_base(inner, src),
            None => (None, Vec::new()),
        },
        "type_identifier" => (Some(text(ty, src).to_owned()), Vec::new()),
        "generic_type" => {
            let base = field!(ty, "type")
                .filter(|t| go_kind(t) == "type_identifier")
                .map(|t| text(t, src).to_owned());
            let mut params = Vec::new();
            if let Some(args) = field!(ty, "type_arguments") {
                collect_identifiers(args, src, &mut params);
            }
            (base, params)
        }
        _ => (None, Vec::new()),
    }
}

fn collect_identifiers(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    let Some(_depth) = crate::index::depth::Depth::enter() else {
        return;
    };
    if matches!(go_kind(node), "type_identifier" | "identifier") {
        out.push(text(node, src).to_owned());
        return;
    }
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        collect_identifiers(child, src, out);
    }
}

fn type_spec<'t>(
    spec: Node<'t>,
    decl: Node<'t>,
    src: &[u8],
    siblings: &PrevSiblings<'t>,
    spec_siblings: &PrevSiblings<'t>,
    file: &mut GoFile,
) {
    let Some(name_node) = field!(spec, "name") else {
        return;
    };
    let name = text(name_node, src).to_owned();
    let Some(ty) = field!(spec, "type") else {
        return;
    };
    let qname = format!("{}.{name}", file.pkg_path);
    // A lone spec in `type X struct{...}` is documented above the declaration.
    let doc_node = if decl.named_child_count() == 1 {
        decl
    } else {
        spec
    };
    let signature = match go_kind(ty) {
        "struct_type" => format!("type {name} struct"),
        "interface_type" => format!("type {name} interface"),
        _ => header(spec, None, src)
            .split('\n')
            .next()
            .unwrap_or("")
            .to_owned(),
    };
    let signature = if signature.starts_with("type ") {
        signature
    } else {
        format!("type {signature}")
    };
    let mut builder = BodyBuilder::new(src);
    builder.push_scope();
    if let Some(tps) = field!(spec, "type_parameters") {
        builder.type_params(tps);
    }
    let mut decl_out = GoTypeDecl {
        name: name.clone(),
        line: line(spec),
        end_line: end_line(spec),
        signature,
        doc: doc_comment(doc_node, src, siblings).or_else(|| doc_comment(spec, src, spec_siblings)),
        kind: GoTypeKind::Other,
        alias: go_kind(spec) == "type_alias",
        underlying: GType::Unknown,
        fields: Vec::new(),
        methods: Vec::new(),
        embeds: Vec::new(),
        constraint: false,
    };
    match go_kind(ty) {
        "struct_type" => {
            decl_out.kind = GoTypeKind::Struct;
            let mut c = ty.walk();
            for list in ty.named_children(&mut c) {
                let mut c2 = list.walk();
                for field in list.named_children(&mut c2) {
                    if go_kind(field) != "field_declaration" {
                        continue;
                    }
                    struct_field(field, src, &qname, &mut builder, file, &mut decl_out);
                }
            }
        }
        "interface_type" => {
            decl_out.kind = GoTypeKind::Interface;
            let elem_siblings = PrevSiblings::new(&[ty]);
            let mut c = ty.walk();
            for elem in ty.named_children(&mut c) {
                match go_kind(elem) {
                    "method_elem" => iface_method(
                        elem,
                        src,
                        &qname,
                        &mut builder,
                        &elem_siblings,
                        file,
                        &mut decl_out,
                    ),
                    "type_elem" => {
                        let single = (elem.named_child_count() == 1)
                            .then(|| elem.named_child(0))
                            .flatten()
                            .filter(|t| matches!(go_kind(t), "type_identifier" | "qualified_type"));
                        match single {
                            Some(t) => {
                                decl_out.embeds.push(builder.ty(t));
                                builder.use_type(t);
                            }
                            None => {
                                decl_out.constraint = true;
                                builder.use_type(elem);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {
            decl_out.underlying = builder.ty(ty);
            builder.use_type(ty);
        }
    }
    builder.pop_scope();
    file.bodies.push(builder.finish(qname));
    file.types.push(decl_out);
}

fn struct_field(
    field: Node<'_>,
    src: &[u8],
    type_qname: &str,
    builder: &mut BodyBuilder<'_>,
    file: &mut GoFile,
    out: &mut GoTypeDecl,
) {
    let Some(ty_node) = field!(field, "type") else {
        return;
    };
    let ty = builder.ty(ty_node);
    let mut names = Vec::new();
    let mut c = field.walk();
    for n in field.children_by_field_name("name", &mut c) {
        names.push(text(n, src).to_owned());
    }
    let embedded = names.is_empty();
    if embedded {
        match embedded_name(&ty) {
            Some(n) => names.push(n),
            None => return,
        }
    }
    let signature = crate::index::syntax::collapse(text(field, src), 240);
    for name in names {
        if name == "_" {
            continue;
        }
        let mut field_builder = BodyBuilder::new(src);
        field_builder.inherit_scopes(builder);
        field_builder.use_type(ty_node);
        let owner = format!("{type_qname}.{name}");
        file.bodies.push(field_builder.finish(owner));
        out.fields.push(GoField {
            name,
            embedded,
            ty: ty.clone(),
            line: line(field),
            end_line: end_line(field),
            signature: signature.clone(),
        });
    }
}

fn embedded_name(ty: &GType) -> Option<String> {
    match ty {
        GType::Named { name, .. } => Some(name.clone()),
        GType::Pointer(inner) => embedded_name(inner),
        _ => None,
    }
}

fn iface_method<'t>(
    elem: Node<'t>,
    src: &[u8],
    iface_qname: &str,
    builder: &mut BodyBuilder<'_>,
    siblings: &PrevSiblings<'t>,
    file: &mut GoFile,
    out: &mut GoTypeDecl,
) {
    let Some(name_node) = field!(elem, "name") else {
        return;
    };
    let name = text(name_node, src).to_owned();
    let mut method_builder = BodyBuilder::new(src);
    method_builder.inherit_scopes(builder);
    method_builder.push_scope();
    let sig = method_builder.signature(field!(elem, "parameters"), field!(elem, "result"), false);
    method_builder.pop_scope();
    file.bodies
        .push(method_builder.finish(format!("{iface_qname}.{name}")));
    out.methods.push(GoIfaceMethod {
        name,
        line: line(elem),
        end_line: end_line(elem),
        signature: crate::index::syntax::collapse(text(elem, src), 240),
        doc: doc_comment(elem, src, siblings),
        sig,
    });
}

fn values<'t>(node: Node<'t>, src: &[u8], siblings: &PrevSiblings<'t>, file: &mut GoFile) {
    let is_const = go_kind(node) == "const_declaration";
    let mut specs = Vec::new();
    let mut parents = vec![node];
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        match go_kind(child) {
            "const_spec" | "var_spec" => specs.push(child),
            "var_spec_list" => {
                parents.push(child);
                let mut c2 = child.walk();
                specs.extend(
                    child
                        .named_children(&mut c2)
                        .filter(|s| go_kind(s) == "var_spec"),
                );
            }
            _ => {}
        }
    }
    let single = specs.len() == 1;
    let spec_siblings = PrevSiblings::new(&parents);
    for spec in specs {
        let mut names = Vec::new();
        let mut c = spec.walk();
        for n in spec.children_by_field_name("name", &mut c) {
            if go_kind(n) == "identifier" {
                names.push(text(n, src).to_owned());
            }
        }
        let ty_node = field!(spec, "type");
        // Initializers run in the package body (body 0).
        let mut init_exprs = Vec::new();
        let mut pkg_builder = BodyBuilder::resume(src, std::mem::take(&mut file.bodies[0]));
        if let Some(value) = field!(spec, "value") {
            let mut c = value.walk();
            let items: Vec<Node<'_>> = value.named_children(&mut c).collect();
            for item in items {
                init_exprs.push(pkg_builder.expr(item, true));
            }
        }
        file.bodies[0] = pkg_builder.finish_resumed();
        let ty = ty_node.map(|t| {
            let mut b = BodyBuilder::new(src);
            b.ty(t)
        });
        let doc_node = if single { node } else { spec };
        let signature = crate::index::syntax::collapse(
            &format!(
                "{} {}",
                if is_const { "const" } else { "var" },
                text(spec, src)
            ),
            240,
        );
        for (i, name) in names.iter().enumerate() {
            if name == "_" {
                continue;
            }
            let qname = format!("{}.{name}", file.pkg_path);
            if let Some(t) = ty_node {
                let mut b = BodyBuilder::new(src);
                b.use_type(t);
                file.bodies.push(b.finish(qname.clone()));
            }
            let init = if init_exprs.len() == names.len() {
                Some((0usize, init_exprs[i], 0u32))
            } else if init_exprs.len() == 1 {
                Some((0usize, init_exprs[0], i as u32))
            } else {
                None
            };
            file.values.push(GoValueDecl {
                name: name.clone(),
                is_const,
                line: line(spec),
                end_line: end_line(spec),
                signature: signature.clone(),
                doc: doc_comment(doc_node, src, siblings)
                    .or_else(|| doc_comment(spec, src, &spec_siblings)),
                ty: ty.clone(),
                init,
            });
        }
    }
}
