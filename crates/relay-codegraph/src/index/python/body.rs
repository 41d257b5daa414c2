//! The Python tree walker that fills [`PyFile`].

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tree_sitter::Node;

use super::{
    DefKind, PBind, PExpr, PRef, PRefKind, PyDef, PyFile, PyImport, PyScope, PyVar, ScopeKind,
    is_constant_name,
};
use crate::index::facts::{end_line, field, header, line, py_kind, text};

/// Per-method context for `self.x = ...` tracking.
#[derive(Clone)]
struct MethodCtx {
    self_name: String,
    class_def: u32,
}

pub(crate) struct PyBuilder<'s> {
    src: &'s [u8],
    file: PyFile,
    scope: u32,
    owner: u32,
    method: Option<MethodCtx>,
    seen_vars: HashSet<String>,
}

impl<'s> PyBuilder<'s> {
    pub(crate) fn new(src: &'s [u8], module: String, is_package: bool) -> Self {
        let mut file = PyFile {
            module: module.clone(),
            is_package,
            ..PyFile::default()
        };
        file.scopes.push(PyScope {
            kind: ScopeKind::Module,
            parent: None,
            bindings: HashMap::default(),
            globals: HashSet::default(),
            class_def: None,
        });
        file.owners.push(module);
        PyBuilder {
            src,
            file,
            scope: 0,
            owner: 0,
            method: None,
            seen_vars: HashSet::default(),
        }
    }

    pub(crate) fn finish(self) -> PyFile {
        self.file
    }

    pub(crate) fn module(&mut self, root: Node<'_>) {
        self.file.doc = docstring(root, self.src);
        self.block(root);
    }

    fn t(&self, node: Node<'_>) -> &'s str {
        text(node, self.src)
    }

    fn push(&mut self, e: PExpr) -> u32 {
        self.file.exprs.push(e);
        (self.file.exprs.len() - 1) as u32
    }

    fn add_ref(&mut self, kind: PRefKind, expr: u32, line: u32, name: &str) {
        self.file.refs.push(PRef {
            kind,
            expr,
            line,
            owner: self.owner,
            name: crate::index::facts::collapse(name, 120),
        });
    }

    fn bind(&mut self, name: &str, b: PBind) {
        let scope = &mut self.file.scopes[self.scope as usize];
        if scope.globals.contains(name) {
            // `global x` in a function: the binding is module-level (type unknown to us).
            self.file.scopes[0]
                .bindings
                .entry(name.to_owned())
                .or_default()
                .push(PBind::Other);
            return;
        }
        scope.bindings.entry(name.to_owned()).or_default().push(b);
    }

    fn new_scope(&mut self, kind: ScopeKind, class_def: Option<u32>) -> u32 {
        self.file.scopes.push(PyScope {
            kind,
            parent: Some(self.scope),
            bindings: HashMap::default(),
            globals: HashSet::default(),
            class_def,
        });
        (self.file.scopes.len() - 1) as u32
    }

    fn qprefix(&self) -> String {
        self.file.owners[self.owner as usize].clone()
    }

    fn block(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            self.stmt(child);
        }
    }

    fn stmt(&mut self, node: Node<'_>) {
        match py_kind(node) {
            "function_definition" => self.function(node, &[]),
            "class_definition" => self.class(node, &[]),
            "decorated_definition" => {
                let mut c = node.walk();
                let decorators: Vec<Node<'_>> = node
                    .named_children(&mut c)
                    .filter(|n| py_kind(n) == "decorator")
                    .collect();
                if let Some(def) = field!(node, "definition") {
                    match py_kind(def) {
                        "function_definition" => self.function(def, &decorators),
                        "class_definition" => self.class(def, &decorators),
                        _ => {}
                    }
                }
            }
            "import_statement" => self.import(node),
            "import_from_statement" => self.import_from(node),
            "future_import_statement"
            | "pass_statement"
            | "break_statement"
            | "continue_statement"
            | "comment" => {}
            "expression_statement" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    match py_kind(child) {
                        "assignment" => self.assignment(child),
                        "augmented_assignment" => {
                            for side in [field!(child, "left"), field!(child, "right")]
                                .into_iter()
                                .flatten()
                            {
                                self.expr(side, true);
                            }
                        }
                        _ => {
                            self.expr(child, true);
                        }
                    }
                }
            }
            "global_statement" | "nonlocal_statement" => {
                let mut c = node.walk();
                let names: Vec<String> = node
                    .named_children(&mut c)
                    .map(|n| self.t(n).to_owned())
                    .collect();
                let global = py_kind(node) == "global_statement";
                for name in names {
                    if global {
                        self.file.scopes[self.scope as usize].globals.insert(name);
                    } else {
                        // `nonlocal`: a closure variable; bound elsewhere, type unknown here.
                        self.bind(&name, PBind::Other);
                    }
                }
            }
            "for_statement" => {
                if let Some(right) = field!(node, "right") {
                    self.expr(right, true);
                }
                if let Some(left) = field!(node, "left") {
                    self.bind_targets(left, None);
                }
                for b in [field!(node, "body"), field!(node, "alternative")]
                    .into_iter()
                    .flatten()
                {
                    self.stmt(b);
                }
            }
            "with_statement" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    if py_kind(child) == "with_clause" {
                        let mut c2 = child.walk();
                        let items: Vec<Node<'_>> = child.named_children(&mut c2).collect();
                        for item in items {
                            if let Some(value) = field!(item, "value") {
                                self.with_value(value);
                            }
                        }
                    } else {
                        self.stmt(child);
                    }
                }
            }
            "except_clause" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    match py_kind(child) {
                        "block" => self.block(child),
                        "as_pattern" => self.with_value(child),
                        _ => {
                            self.expr(child, true);
                        }
                    }
                }
            }
            "block" | "module" | "else_clause" | "finally_clause" | "try_statement"
            | "if_statement" | "elif_clause" | "while_statement" | "match_statement"
            | "case_clause" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    match py_kind(child) {
                        "case_pattern" | "if_clause" => {}
                        k if is_statement(k) || k == "block" || k.ends_with("_clause") => {
                            self.stmt(child)
                        }
                        _ => {
                            self.expr(child, true);
                        }
                    }
                }
            }
            _ => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    if is_statement(py_kind(child)) {
                        self.stmt(child);
                    } else {
                        self.expr(child, true);
                    }
                }
            }
        }
    }

    /// `with x as y` / `except E as e`: evaluate x, bind y (type unknown).
    fn with_value(&mut self, value: Node<'_>) {
        if py_kind(value) == "as_pattern" {
            let mut c = value.walk();
            let children: Vec<Node<'_>> = value.named_children(&mut c).collect();
            for child in children {
                if py_kind(child) == "as_pattern_target" {
                    if let Some(target) = child.named_child(0) {
                        self.bind_targets(target, None);
                    }
                } else {
                    self.expr(child, true);
                }
            }
        } else {
            self.expr(value, true);
        }
    }

    fn assignment(&mut self, node: Node<'_>) {
        let right = field!(node, "right");
        let value = match right {
            Some(r) if py_kind(r) == "assignment" => {
                self.assignment(r);
                field!(r, "right").map(|_| self.push(PExpr::Other))
            }
            Some(r) => Some(self.expr(r, true)),
            None => None,
        };
        let annotation = field!(node, "type").map(|t| self.annotation(t));
        if let Some(left) = field!(node, "left") {
            if self.scope == 0 {
                self.module_vars(left, node);
            }
            let bind_value = match (annotation, value) {
                (Some(a), _) => Some(PBind::Annotated(Some(a))),
                (None, Some(v)) => Some(PBind::Assign(v)),
                _ => None,
            };
            self.bind_targets(left, bind_value);
        }
    }

    /// Records module-level variables (first assignment of each name).
    fn module_vars(&mut self, left: Node<'_>, stmt: Node<'_>) {
        let mut names = Vec::new();
        collect_target_names(left, self.src, &mut names);
        for name in names {
            if !self.seen_vars.insert(name.clone()) {
                continue;
            }
            self.file.vars.push(PyVar {
                is_const: is_constant_name(&name),
                name,
                line: line(stmt),
                end_line: end_line(stmt),
                signature: crate::index::facts::collapse(
                    self.t(stmt).lines().next().unwrap_or(""),
                    240,
                ),
            });
        }
    }

    /// Binds assignment targets; only a single plain name gets `value`.
    fn bind_targets(&mut self, target: Node<'_>, value: Option<PBind>) {
        match py_kind(target) {
            "identifier" => {
                let name = self.t(target).to_owned();
                self.bind(&name, value.unwrap_or(PBind::Other));
            }
            "attribute" => {
                let object = field!(target, "object");
                let attr = field!(target, "attribute").map(|a| self.t(a));
                if let (
                    Some(obj),
                    Some(attr),
                    Some(method),
                    Some(PBind::Assign(v) | PBind::Annotated(Some(v))),
                ) = (object, attr, self.method.clone(), value.as_ref())
                    && py_kind(obj) == "identifier"
                    && self.t(obj) == method.self_name
                {
                    self.file.defs[method.class_def as usize]
                        .self_attrs
                        .push((attr.to_owned(), *v));
                }
                if let Some(obj) = object {
                    self.expr(obj, true);
                }
            }
            "subscript" => {
                self.expr(target, true);
            }
            _ => {
                let mut c = target.walk();
                let children: Vec<Node<'_>> = target.named_children(&mut c).collect();
                for child in children {
                    self.bind_targets(child, None);
                }
            }
        }
    }

    fn annotation(&mut self, node: Node<'_>) -> u32 {
        let inner = if py_kind(node) == "type" {
            node.named_child(0).unwrap_or(node)
        } else {
            node
        };
        self.type_expr(inner)
    }

    /// An expression in a type position: `Base[T]` denotes `Base`.
    fn type_expr(&mut self, node: Node<'_>) -> u32 {
        match py_kind(node) {
            "subscript" | "generic_type" => {
                let value = field!(node, "value").or_else(|| node.named_child(0));
                let mut c = node.walk();
                let rest: Vec<Node<'_>> = node.named_children(&mut c).skip(1).collect();
                for r in rest {
                    self.expr(r, true);
                }
                match value {
                    Some(v) => self.expr(v, true),
                    None => self.push(PExpr::Other),
                }
            }
            "string" => self.push(PExpr::Other),
            _ => self.expr(node, true),
        }
    }

    fn function(&mut self, node: Node<'_>, decorators: &[Node<'_>]) {
        let Some(name_node) = field!(node, "name") else {
            return;
        };
        let name = self.t(name_node).to_owned();
        let enclosing_scope = self.scope;
        let in_class = self.file.scopes[enclosing_scope as usize].kind == ScopeKind::Class;
        let class_def = self.file.scopes[enclosing_scope as usize].class_def;
        let qname = format!("{}.{name}", self.qprefix());
        let def_idx = self.file.defs.len() as u32;
        let body = field!(node, "body");
        let mut is_static = false;
        let mut is_classmethod = false;
        for d in decorators {
            let t = self.t(*d).trim_start_matches('@').trim();
            is_static |= t == "staticmethod";
            is_classmethod |= t == "classmethod";
        }
        let kind = if in_class {
            DefKind::Method
        } else {
            DefKind::Function
        };
        let saved_owner = self.declare(node, body, &name, qname.clone(), kind, decorators);
        // Annotations and defaults are evaluated in the enclosing scope.
        let returns = field!(node, "return_type").map(|r| self.annotation(r));
        let fscope = self.new_scope(ScopeKind::Function, None);
        let mut params: Vec<(String, Option<u32>)> = Vec::new();
        if let Some(plist) = field!(node, "parameters") {
            let mut c = plist.walk();
            let items: Vec<Node<'_>> = plist.named_children(&mut c).collect();
            for p in items {
                let (pname, ann) = match py_kind(p) {
                    "identifier" => (Some(self.t(p).to_owned()), None),
                    "typed_parameter" | "typed_default_parameter" | "default_parameter" => {
                        let ann = field!(p, "type").map(|t| self.annotation(t));
                        if let Some(v) = field!(p, "value") {
                            self.expr(v, true);
                        }
                        let pn = field!(p, "name")
                            .or_else(|| p.named_child(0))
                            .filter(|n| py_kind(n) == "identifier")
                            .map(|n| self.t(n).to_owned());
                        (pn, ann)
                    }
                    _ => (None, None),
                };
                if let Some(pname) = pname {
                    params.push((pname, ann));
                }
            }
        }
        self.file.defs[def_idx as usize].returns = returns;
        self.file.defs[def_idx as usize].scope = fscope;
        let saved_scope = self.scope;
        let saved_method = self.method.clone();
        self.scope = fscope;
        for (i, (pname, ann)) in params.into_iter().enumerate() {
            let bind = match (i, in_class && !is_static, class_def) {
                (0, true, Some(cd)) => {
                    let class_q = self.file.defs[cd as usize].qname.clone();
                    if is_classmethod {
                        PBind::ClsParam(class_q)
                    } else {
                        self.method = Some(MethodCtx {
                            self_name: pname.clone(),
                            class_def: cd,
                        });
                        PBind::SelfParam(class_q)
                    }
                }
                _ => PBind::Annotated(ann),
            };
            self.bind(&pname, bind);
        }
        if let Some(body) = body {
            self.block(body);
        }
        self.scope = saved_scope;
        self.method = saved_method;
        self.owner = saved_owner;
    }

    fn decorators(&mut self, decorators: &[Node<'_>]) {
        for d in decorators {
            let Some(expr_node) = d.named_child(0) else {
                continue;
            };
            if py_kind(expr_node) == "call" {
                self.expr(expr_node, true);
            } else {
                // `@dec` calls `dec` with the decorated object.
                let callee = self.expr(expr_node, false);
                let call = self.push(PExpr::Call(callee));
                let written = self.t(expr_node).to_owned();
                self.add_ref(PRefKind::Call, call, line(expr_node), &written);
            }
        }
    }

    /// Records a function, method or class definition and binds its name in the current scope,
    /// then makes it the owner of what follows (its decorators first: they belong to it). Returns
    /// the previous owner, to restore when the definition's body is done.
    fn declare(
        &mut self,
        node: Node<'_>,
        body: Option<Node<'_>>,
        name: &str,
        qname: String,
        kind: DefKind,
        decorators: &[Node<'_>],
    ) -> u32 {
        let parent = self.qprefix();
        self.file.defs.push(PyDef {
            qname: qname.clone(),
            name: name.to_owned(),
            kind,
            line: line(node),
            end_line: end_line(node),
            signature: header(node, body, self.src),
            doc: body.and_then(|b| docstring(b, self.src)),
            parent,
            bases: Vec::new(),
            scope: 0,
            returns: None,
            self_attrs: Vec::new(),
        });
        let bind = if kind == DefKind::Class {
            PBind::Class(qname.clone())
        } else {
            PBind::Def(qname.clone())
        };
        self.bind(name, bind);
        let saved_owner = self.owner;
        self.file.owners.push(qname);
        self.owner = (self.file.owners.len() - 1) as u32;
        self.decorators(decorators);
        saved_owner
    }

    fn class(&mut self, node: Node<'_>, decorators: &[Node<'_>]) {
        let Some(name_node) = field!(node, "name") else {
            return;
        };
        let name = self.t(name_node).to_owned();
        let qname = format!("{}.{name}", self.qprefix());
        let body = field!(node, "body");
        let def_idx = self.file.defs.len() as u32;
        let saved_owner =
            self.declare(node, body, &name, qname.clone(), DefKind::Class, decorators);
        let mut bases = Vec::new();
        if let Some(args) = field!(node, "superclasses") {
            let mut c = args.walk();
            let items: Vec<Node<'_>> = args.named_children(&mut c).collect();
            for item in items {
                if py_kind(item) == "keyword_argument" {
                    if let Some(v) = field!(item, "value") {
                        self.expr(v, true);
                    }
                    continue;
                }
                let before = self.file.refs.len();
                let e = self.type_expr(item);
                // The base itself is an `inherits` reference, not a plain use.
                if let Some(pos) = self.file.refs[before..]
                    .iter()
                    .position(|r| r.expr == e && r.kind == PRefKind::Use)
                {
                    self.file.refs.remove(before + pos);
                }
                let written = self.t(item).to_owned();
                self.add_ref(PRefKind::Inherit, e, line(item), &written);
                bases.push(e);
            }
        }
        let cscope = self.new_scope(ScopeKind::Class, Some(def_idx));
        self.file.defs[def_idx as usize].bases = bases;
        self.file.defs[def_idx as usize].scope = cscope;
        let saved_scope = self.scope;
        let saved_method = self.method.take();
        self.scope = cscope;
        if let Some(body) = body {
            self.block(body);
        }
        self.scope = saved_scope;
        self.method = saved_method;
        self.owner = saved_owner;
    }

    /// The absolute module named by a relative import (`level` dots, then `rest`).
    fn absolute(&self, level: usize, rest: &str) -> String {
        if level == 0 {
            return rest.to_owned();
        }
        let mut parts: Vec<&str> = self.file.module.split('.').collect();
        if !self.file.is_package {
            parts.pop();
        }
        for _ in 1..level {
            parts.pop();
        }
        let mut base = parts.join(".");
        if !rest.is_empty() {
            if !base.is_empty() {
                base.push('.');
            }
            base.push_str(rest);
        }
        base
    }

    fn import(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
        for n in names {
            let (module, alias) = match py_kind(n) {
                "aliased_import" => (
                    field!(n, "name").map(|m| self.t(m).to_owned()),
                    field!(n, "alias").map(|a| self.t(a).to_owned()),
                ),
                _ => (Some(self.t(n).to_owned()), None),
            };
            let Some(module) = module else { continue };
            let module: String = module.split_whitespace().collect();
            self.file.imports.push(PyImport {
                line: line(n),
                owner: self.owner,
                module: module.clone(),
                name: None,
            });
            match alias {
                Some(alias) => self.bind(&alias, PBind::ImportModule(module)),
                None => {
                    let top = module.split('.').next().unwrap_or(&module).to_owned();
                    self.bind(&top.clone(), PBind::ImportModule(top));
                }
            }
        }
    }

    fn import_from(&mut self, node: Node<'_>) {
        let Some(module_node) = field!(node, "module_name") else {
            return;
        };
        let module = if py_kind(module_node) == "relative_import" {
            let raw = self.t(module_node);
            let level = raw.bytes().take_while(|&b| b == b'.').count();
            let rest: String = raw[level..].split_whitespace().collect();
            self.absolute(level, &rest)
        } else {
            self.t(module_node).split_whitespace().collect()
        };
        let mut c = node.walk();
        let wildcard = node
            .named_children(&mut c)
            .any(|n| py_kind(n) == "wildcard_import");
        if wildcard {
            self.file.imports.push(PyImport {
                line: line(node),
                owner: self.owner,
                module: module.clone(),
                name: None,
            });
            if self.scope == 0 {
                self.file.star_imports.push(module);
            }
            return;
        }
        let mut c = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
        for n in names {
            let (name, alias) = match py_kind(n) {
                "aliased_import" => (
                    field!(n, "name").map(|m| self.t(m).to_owned()),
                    field!(n, "alias").map(|a| self.t(a).to_owned()),
                ),
                _ => (Some(self.t(n).to_owned()), None),
            };
            let Some(name) = name else { continue };
            self.file.imports.push(PyImport {
                line: line(n),
                owner: self.owner,
                module: module.clone(),
                name: Some(name.clone()),
            });
            let bound = alias.unwrap_or_else(|| name.clone());
            self.bind(
                &bound,
                PBind::ImportFrom {
                    module: module.clone(),
                    name,
                },
            );
        }
    }

    /// Builds an expression, recording calls and (in value position) name/attribute uses.
    fn expr(&mut self, node: Node<'_>, value_pos: bool) -> u32 {
        match py_kind(node) {
            "identifier" => {
                let name = self.t(node).to_owned();
                let e = self.push(PExpr::Name {
                    scope: self.scope,
                    name: name.clone(),
                });
                if value_pos {
                    self.add_ref(PRefKind::Use, e, line(node), &name);
                }
                e
            }
            "attribute" => {
                let object = match field!(node, "object") {
                    Some(o) => self.expr(o, false),
                    None => self.push(PExpr::Other),
                };
                let attr = field!(node, "attribute")
                    .map_or("", |a| self.t(a))
                    .to_owned();
                let e = self.push(PExpr::Attr(object, attr));
                if value_pos {
                    let written = self.t(node).to_owned();
                    self.add_ref(PRefKind::Use, e, end_line(node), &written);
                }
                e
            }
            "call" => {
                let Some(function) = field!(node, "function") else {
                    return self.push(PExpr::Other);
                };
                let args = field!(node, "arguments");
                let is_super = py_kind(function) == "identifier" && self.t(function) == "super";
                let callee = if is_super {
                    None
                } else {
                    Some(self.expr(function, false))
                };
                if let Some(args) = args {
                    let mut c = args.walk();
                    let items: Vec<Node<'_>> = args.named_children(&mut c).collect();
                    for item in items {
                        match py_kind(item) {
                            "keyword_argument" => {
                                if let Some(v) = field!(item, "value") {
                                    self.expr(v, true);
                                }
                            }
                            _ => {
                                self.expr(item, true);
                            }
                        }
                    }
                }
                match callee {
                    None => self.push(PExpr::Super { scope: self.scope }),
                    Some(callee) => {
                        let e = self.push(PExpr::Call(callee));
                        let written = self.t(function).to_owned();
                        self.add_ref(PRefKind::Call, e, end_line(function), &written);
                        e
                    }
                }
            }
            "parenthesized_expression" | "await" => match node.named_child(0) {
                Some(inner) => self.expr(inner, value_pos),
                None => self.push(PExpr::Other),
            },
            "named_expression" => {
                let value = field!(node, "value").map(|v| self.expr(v, true));
                if let (Some(name), Some(v)) = (field!(node, "name"), value) {
                    let name = self.t(name).to_owned();
                    self.bind(&name, PBind::Assign(v));
                }
                value.unwrap_or_else(|| self.push(PExpr::Other))
            }
            "lambda" => {
                let scope = self.new_scope(ScopeKind::Function, None);
                let saved = self.scope;
                if let Some(params) = field!(node, "parameters") {
                    let mut names = Vec::new();
                    collect_param_names(params, self.src, &mut names);
                    self.scope = scope;
                    for n in names {
                        self.bind(&n, PBind::Other);
                    }
                }
                self.scope = scope;
                if let Some(body) = field!(node, "body") {
                    self.expr(body, true);
                }
                self.scope = saved;
                self.push(PExpr::Other)
            }
            "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => {
                let scope = self.new_scope(ScopeKind::Function, None);
                let saved = self.scope;
                self.scope = scope;
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in &children {
                    if py_kind(child) == "for_in_clause" {
                        if let Some(right) = field!(*child, "right") {
                            self.expr(right, true);
                        }
                        if let Some(left) = field!(*child, "left") {
                            self.bind_targets(left, None);
                        }
                    }
                }
                for child in children {
                    if py_kind(child) != "for_in_clause" {
                        self.expr(child, true);
                    }
                }
                self.scope = saved;
                self.push(PExpr::Other)
            }
            "keyword_argument" => {
                if let Some(v) = field!(node, "value") {
                    self.expr(v, true);
                }
                self.push(PExpr::Other)
            }
            "string"
            | "integer"
            | "float"
            | "true"
            | "false"
            | "none"
            | "ellipsis"
            | "comment"
            | "dotted_name"
            | "case_pattern"
            | "keyword_separator"
            | "positional_separator"
            | "string_content"
            | "string_start"
            | "string_end"
            | "escape_sequence" => {
                if py_kind(node) == "string" {
                    // f-string interpolations contain expressions.
                    let mut c = node.walk();
                    let parts: Vec<Node<'_>> = node
                        .named_children(&mut c)
                        .filter(|n| py_kind(n) == "interpolation")
                        .collect();
                    for p in parts {
                        if let Some(e) = field!(p, "expression") {
                            self.expr(e, true);
                        }
                    }
                }
                self.push(PExpr::Other)
            }
            kind if is_statement(kind) => {
                self.stmt(node);
                self.push(PExpr::Other)
            }
            _ => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    self.expr(child, true);
                }
                self.push(PExpr::Other)
            }
        }
    }
}

fn is_statement(kind: &str) -> bool {
    kind.ends_with("_statement")
        || matches!(
            kind,
            "function_definition" | "class_definition" | "decorated_definition" | "block"
        )
}

fn collect_target_names(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    match py_kind(node) {
        "identifier" => out.push(text(node, src).to_owned()),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "list_splat_pattern" => {
            let mut c = node.walk();
            for child in node.named_children(&mut c) {
                collect_target_names(child, src, out);
            }
        }
        _ => {}
    }
}

fn collect_param_names(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        match py_kind(p) {
            "identifier" => out.push(text(p, src).to_owned()),
            _ => {
                if let Some(n) = field!(p, "name")
                    .or_else(|| p.named_child(0))
                    .filter(|n| py_kind(n) == "identifier")
                {
                    out.push(text(n, src).to_owned());
                }
            }
        }
    }
}

/// First line of the docstring of a module or block.
pub(crate) fn docstring(body: Node<'_>, src: &[u8]) -> Option<String> {
    let mut c = body.walk();
    let first = body
        .named_children(&mut c)
        .find(|n| py_kind(n) != "comment")?;
    if py_kind(first) != "expression_statement" {
        return None;
    }
    let s = first.named_child(0)?;
    if py_kind(s) != "string" {
        return None;
    }
    let raw = text(s, src);
    let trimmed = raw
        .trim_start_matches(['r', 'u', 'R', 'U', 'b', 'B'])
        .trim_matches(['"', '\'']);
    let line = trimmed.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.to_owned())
}
