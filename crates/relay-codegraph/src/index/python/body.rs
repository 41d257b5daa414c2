//! The Python tree walker that fills [`PyFile`].

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tree_sitter::Node;

use super::{
    DefKind, PArg, PBind, PCall, PEventKind, PExpr, PParam, PRef, PRefKind, PStore, ParamKind,
    PyDef, PyFile, PyImport, PyScope, PyVar, ScopeKind, const_key, is_constant_name,
};
use crate::index::syntax::{end_line, field, header, line, py_kind, text};

mod order;
mod statements;

/// The key of items appended to a sequence (`xs.append(v)`): past the literal's items, so a
/// constant index into the literal never reaches them.
pub(crate) const APPENDED_KEY: &str = "+";
/// The key of a subscript whose key is a name (`d[KEY]`); the name is the expression built
/// just before the subscript, resolved to a constant string when evaluated.
pub(crate) const NAME_KEY: &str = "n:";
/// The prefix of a slice key, `r:START:END` (`END` empty: to the end).
pub(crate) const SLICE_KEY: &str = "r:";

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
    /// The definition whose body is being walked (for `return` and `yield`).
    func: Option<u32>,
    seen_vars: HashSet<String>,
    /// The order of bindings and object events in the scopes being walked.
    order: order::Order,
    /// Calls (and other points where code may run: `yield`, `await`, loop heads, `with`)
    /// built so far, in source order.
    calls_built: u32,
    /// Branches, loops and `try` blocks entered in the current function (an attribute set
    /// at depth 0 of a method is set on every call).
    branch_depth: u32,
    /// A use of an identifier as the object of an attribute or subscript (not an escape).
    object_ctx: bool,
    /// The method whose `sets_self` is being collected, and what it has set so far.
    definite_owner: Option<u32>,
    definite: Vec<(String, u32)>,
    /// The collecting method may have returned early (assignments after are not definite).
    early_exit: bool,
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
            final_reach: HashMap::default(),
        });
        file.owners.push(module);
        PyBuilder {
            src,
            file,
            scope: 0,
            owner: 0,
            method: None,
            func: None,
            seen_vars: HashSet::default(),
            order: order::Order::default(),
            calls_built: 0,
            branch_depth: 0,
            object_ctx: false,
            definite_owner: None,
            definite: Vec::new(),
            early_exit: false,
        }
        .with_module_frame()
    }

    fn with_module_frame(mut self) -> Self {
        self.enter_frame(0);
        self
    }

    pub(crate) fn finish(mut self) -> PyFile {
        self.finish_order();
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
            name: crate::index::syntax::collapse(name, 120),
        });
    }

    fn bind(&mut self, name: &str, b: PBind) {
        let scope = &mut self.file.scopes[self.scope as usize];
        if scope.globals.contains(name) {
            // `global x` in a function: the binding is module-level (type unknown to us).
            let binds = self.file.scopes[0]
                .bindings
                .entry(name.to_owned())
                .or_default();
            binds.push(PBind::Other);
            let index = (binds.len() - 1) as u32;
            if self.scope == 0 {
                self.order_bind(name, index);
            } else {
                self.order_anytime(name, index);
            }
            return;
        }
        let binds = scope.bindings.entry(name.to_owned()).or_default();
        binds.push(b);
        let index = (binds.len() - 1) as u32;
        self.order_bind(name, index);
    }

    fn new_scope(&mut self, kind: ScopeKind, class_def: Option<u32>) -> u32 {
        self.file.scopes.push(PyScope {
            kind,
            parent: Some(self.scope),
            bindings: HashMap::default(),
            globals: HashSet::default(),
            class_def,
            final_reach: HashMap::default(),
        });
        (self.file.scopes.len() - 1) as u32
    }

    fn qprefix(&self) -> String {
        self.file.owners[self.owner as usize].clone()
    }

    fn block(&mut self, node: Node<'_>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            self.stmt(child);
        }
    }

    fn stmt(&mut self, node: Node<'_>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
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
            "return_statement" => {
                if let Some(value) = node.named_child(0) {
                    let e = self.expr(value, true);
                    if let Some(f) = self.func {
                        self.file.defs[f as usize].returned.push(e);
                    }
                }
                self.exit_early();
                self.order_dead();
            }
            "raise_statement" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for (i, child) in children.into_iter().enumerate() {
                    // `raise Cls` constructs `Cls`, like `raise Cls()`.
                    if i == 0 && matches!(py_kind(child), "identifier" | "attribute") {
                        let callee = self.expr(child, false);
                        let call = self.push(PExpr::Call(callee));
                        self.calls_built += 1;
                        let written = self.t(child).to_owned();
                        self.add_ref(PRefKind::Call, call, line(child), &written);
                    } else {
                        self.expr(child, true);
                    }
                }
                self.exit_early();
                self.order_dead();
            }
            "import_from_statement" => self.import_from(node),
            "future_import_statement" | "pass_statement" | "comment" => {}
            "expression_statement" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    match py_kind(child) {
                        "assignment" => {
                            self.assignment(child);
                        }
                        "augmented_assignment" => {
                            for side in [field!(child, "left"), field!(child, "right")]
                                .into_iter()
                                .flatten()
                            {
                                self.expr(side, true);
                            }
                            // `xs += ys` may change the object in place (`n.x += 1` too).
                            if let Some(left) = field!(child, "left") {
                                let object = match py_kind(left) {
                                    "attribute" => field!(left, "object"),
                                    "subscript" => field!(left, "value"),
                                    _ => Some(left),
                                };
                                if let Some(o) = object.filter(|o| py_kind(*o) == "identifier") {
                                    let name = self.t(o).to_owned();
                                    self.order_escape(&name);
                                }
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
                        self.order_nonlocal(&name);
                        self.bind(&name, PBind::Other);
                    }
                }
            }
            "for_statement" => self.for_statement(node),
            "while_statement" => self.while_statement(node),
            "if_statement" => self.if_statement(node),
            "try_statement" => self.try_statement(node),
            "match_statement" => self.match_statement(node),
            "with_statement" => self.with_statement(node),
            "break_statement" => self.order_jump(true),
            "continue_statement" => self.order_jump(false),
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
            "block" | "module" | "else_clause" | "finally_clause" | "elif_clause"
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
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
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

    /// An assignment; returns the assigned value (`a = b = f`: both are bound to `f`).
    fn assignment(&mut self, node: Node<'_>) -> Option<u32> {
        let _depth = crate::index::depth::Depth::enter()?;
        let right = field!(node, "right");
        let value = match right {
            Some(r) if py_kind(r) == "assignment" => self.assignment(r),
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
            if annotation.is_none()
                && let Some(v) = value
            {
                self.store_targets(left, v);
            }
            self.bind_targets(left, bind_value);
        }
        value
    }

    /// Records what an assignment of `value` stores into containers and attributes, and binds
    /// the names of an unpacking target (`a, b = value`) to the items of `value`.
    fn store_targets(&mut self, left: Node<'_>, value: u32) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        match py_kind(left) {
            "subscript" => {
                let Some(obj) = field!(left, "value") else {
                    return;
                };
                let target = self.object_expr(obj, false);
                let key = self.subscript_key(left);
                self.object_event(
                    target,
                    PEventKind::SetItem {
                        key: key.clone(),
                        value,
                    },
                );
                self.file.stores.push(PStore::Item { target, key, value });
            }
            "attribute" => {
                let (Some(obj), Some(attr)) = (field!(left, "object"), field!(left, "attribute"))
                else {
                    return;
                };
                let is_self = py_kind(obj) == "identifier"
                    && self
                        .method
                        .as_ref()
                        .is_some_and(|m| m.self_name == self.t(obj));
                let attr = self.t(attr).to_owned();
                if is_self {
                    self.self_set(&attr, value);
                    let name = self.t(obj).to_owned();
                    self.order_event(&name, PEventKind::SetAttr { attr, value });
                } else {
                    let target = self.object_expr(obj, false);
                    self.object_event(
                        target,
                        PEventKind::SetAttr {
                            attr: attr.clone(),
                            value,
                        },
                    );
                    self.file.stores.push(PStore::Attr {
                        target,
                        attr,
                        value,
                    });
                }
            }
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                let mut c = left.walk();
                let items: Vec<Node<'_>> = left.named_children(&mut c).collect();
                let star = items
                    .iter()
                    .position(|n| py_kind(n) == "list_splat_pattern");
                if items
                    .iter()
                    .filter(|n| py_kind(**n) == "list_splat_pattern")
                    .count()
                    > 1
                {
                    return;
                }
                let count = items.len();
                for (index, item) in items.into_iter().enumerate() {
                    // Items after a starred one are counted from the end.
                    let key = match star {
                        Some(s) if index > s => format!("i:-{}", count - index),
                        _ => format!("i:{index}"),
                    };
                    if Some(index) == star {
                        // `first, *rest = xs`: `rest` is the list `xs[1:]`.
                        let after = count - index - 1;
                        let end = if after == 0 {
                            String::new()
                        } else {
                            format!("-{after}")
                        };
                        let slice = self.push(PExpr::Subscript(
                            value,
                            Some(format!("{SLICE_KEY}{index}:{end}")),
                        ));
                        if let Some(inner) = item.named_child(0) {
                            self.store_targets(inner, slice);
                            if py_kind(inner) == "identifier" {
                                let name = self.t(inner).to_owned();
                                self.bind(&name, PBind::Assign(slice));
                            }
                        }
                    } else if py_kind(item) == "identifier" && star.is_none() {
                        let name = self.t(item).to_owned();
                        let index = index as u32;
                        self.bind(&name, PBind::Unpack { expr: value, index });
                    } else if py_kind(item) == "identifier" {
                        let part = self.push(PExpr::Subscript(value, Some(key)));
                        let name = self.t(item).to_owned();
                        self.bind(&name, PBind::Assign(part));
                    } else {
                        let part = self.push(PExpr::Subscript(value, Some(key)));
                        self.store_targets(item, part);
                    }
                }
            }
            _ => {}
        }
    }

    /// The constant key of subscript node `node`: an integer (negative ones too), a string,
    /// or a slice with constant bounds and no step ([`SLICE_KEY`]); `None` for anything else.
    fn subscript_key(&self, node: Node<'_>) -> Option<String> {
        let mut c = node.walk();
        let keys: Vec<Node<'_>> = node.children_by_field_name("subscript", &mut c).collect();
        match keys.as_slice() {
            [k] if py_kind(*k) == "unary_operator" => {
                const_key("integer", &self.t(*k).replace(' ', ""))
            }
            [k] if py_kind(*k) == "slice" => {
                let text = self.t(*k).replace(' ', "");
                let (start, end) = text.split_once(':')?;
                let constant = |b: &str| b.is_empty() || b.parse::<i64>().is_ok();
                (constant(start) && constant(end)).then(|| {
                    let start = if start.is_empty() { "0" } else { start };
                    format!("{SLICE_KEY}{start}:{end}")
                })
            }
            [k] => const_key(py_kind(*k), self.t(*k)),
            _ => None,
        }
    }

    /// Binds a loop target to the elements of iterating over `iterated`.
    fn bind_iteration(&mut self, left: Node<'_>, iterated: Option<u32>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        match (py_kind(left), iterated) {
            ("identifier", Some(e)) => {
                let name = self.t(left).to_owned();
                self.bind(&name, PBind::Iter(e));
            }
            ("pattern_list" | "tuple_pattern" | "list_pattern", Some(e)) => {
                let element = self.push(PExpr::Subscript(e, None));
                self.store_targets(left, element);
                self.bind_targets(left, Some(PBind::Other));
            }
            _ => self.bind_targets(left, None),
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
                signature: crate::index::syntax::collapse(
                    self.t(stmt).lines().next().unwrap_or(""),
                    240,
                ),
            });
        }
    }

    /// Binds assignment targets; only a single plain name gets `value`.
    fn bind_targets(&mut self, target: Node<'_>, value: Option<PBind>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
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
                    self.object_expr(obj, true);
                }
            }
            "subscript" => {
                self.expr(target, true);
            }
            "pattern_list" | "tuple_pattern" | "list_pattern"
                if value.is_some() && self.unpacked_plain(target) =>
            {
                // Bound item by item by `store_targets` (a starred name too).
                let mut c = target.walk();
                let children: Vec<Node<'_>> = target.named_children(&mut c).collect();
                for child in children {
                    let starred_name = py_kind(child) == "list_splat_pattern"
                        && child
                            .named_child(0)
                            .is_some_and(|n| py_kind(n) == "identifier");
                    if matches!(
                        py_kind(child),
                        "pattern_list" | "tuple_pattern" | "list_pattern"
                    ) {
                        // A nested pattern's names were bound by `store_targets` too.
                        self.bind_targets(child, value.clone());
                    } else if py_kind(child) != "identifier" && !starred_name {
                        self.bind_targets(child, None);
                    }
                }
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

    /// Whether an unpacking target has at most one starred item (then `store_targets` binds
    /// its names).
    fn unpacked_plain(&self, target: Node<'_>) -> bool {
        let mut c = target.walk();
        target
            .named_children(&mut c)
            .filter(|n| py_kind(*n) == "list_splat_pattern")
            .count()
            <= 1
    }

    fn annotation(&mut self, node: Node<'_>) -> u32 {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return self.push_other();
        };
        let inner = if py_kind(node) == "type" {
            node.named_child(0).unwrap_or(node)
        } else {
            node
        };
        self.type_expr(inner)
    }

    /// An expression in a type position: `Base[T]` denotes `Base`.
    fn type_expr(&mut self, node: Node<'_>) -> u32 {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return self.push_other();
        };
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
        self.file.defs[def_idx as usize].is_static = is_static;
        self.file.defs[def_idx as usize].is_classmethod = is_classmethod;
        // Annotations and defaults are evaluated in the enclosing scope.
        let returns = field!(node, "return_type").map(|r| self.annotation(r));
        let fscope = self.new_scope(ScopeKind::Function, None);
        let params = match field!(node, "parameters") {
            Some(plist) => self.parameters(plist),
            None => Vec::new(),
        };
        self.file.defs[def_idx as usize].returns = returns;
        self.file.defs[def_idx as usize].scope = fscope;
        let saved_scope = self.scope;
        let saved_method = self.method.clone();
        let saved_func = self.func.replace(def_idx);
        let saved_definite = (self.definite_owner, self.early_exit);
        let mut outer_definite = None;
        self.scope = fscope;
        self.enter_frame(fscope);
        let saved_depth = std::mem::replace(&mut self.branch_depth, 0);
        let annotations: Vec<(String, Option<u32>)> = params
            .iter()
            .map(|(p, ann)| (p.name.clone(), *ann))
            .collect();
        self.file.defs[def_idx as usize].params = params.into_iter().map(|(p, _)| p).collect();
        for (i, (pname, ann)) in annotations.into_iter().enumerate() {
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
                        self.definite_owner = Some(def_idx);
                        self.early_exit = false;
                        outer_definite = Some(std::mem::take(&mut self.definite));
                        PBind::SelfParam(class_q)
                    }
                }
                _ => PBind::Param {
                    def: def_idx,
                    index: i as u32,
                    annotation: ann,
                },
            };
            self.bind(&pname, bind);
        }
        if let Some(body) = body {
            self.block(body);
        }
        if let Some(outer) = outer_definite {
            self.file.defs[def_idx as usize].sets_self =
                std::mem::replace(&mut self.definite, outer);
        }
        (self.definite_owner, self.early_exit) = saved_definite;
        self.leave_frame();
        self.branch_depth = saved_depth;
        self.scope = saved_scope;
        self.method = saved_method;
        self.func = saved_func;
        self.owner = saved_owner;
    }

    /// The parameters of a `parameters`/`lambda_parameters` node with their annotations;
    /// defaults and annotations are evaluated in the current (enclosing) scope.
    fn parameters(&mut self, plist: Node<'_>) -> Vec<(PParam, Option<u32>)> {
        let mut out = Vec::new();
        let mut keyword_only = false;
        let mut c = plist.walk();
        let items: Vec<Node<'_>> = plist.named_children(&mut c).collect();
        for p in items {
            let mut kind = if keyword_only {
                ParamKind::KeywordOnly
            } else {
                ParamKind::Plain
            };
            let (pname, ann, default) = match py_kind(p) {
                "identifier" => (Some(self.t(p).to_owned()), None, None),
                "typed_parameter" | "typed_default_parameter" | "default_parameter" => {
                    let ann = field!(p, "type").map(|t| self.annotation(t));
                    let default = field!(p, "value").map(|v| self.expr(v, true));
                    let first = field!(p, "name").or_else(|| p.named_child(0));
                    let pn = match first {
                        Some(n) if py_kind(n) == "identifier" => Some(self.t(n).to_owned()),
                        Some(n) if py_kind(n) == "list_splat_pattern" => {
                            kind = ParamKind::Star;
                            n.named_child(0).map(|n| self.t(n).to_owned())
                        }
                        Some(n) if py_kind(n) == "dictionary_splat_pattern" => {
                            kind = ParamKind::DoubleStar;
                            n.named_child(0).map(|n| self.t(n).to_owned())
                        }
                        _ => None,
                    };
                    (pn, ann, default)
                }
                "list_splat_pattern" => {
                    kind = ParamKind::Star;
                    (p.named_child(0).map(|n| self.t(n).to_owned()), None, None)
                }
                "dictionary_splat_pattern" => {
                    kind = ParamKind::DoubleStar;
                    (p.named_child(0).map(|n| self.t(n).to_owned()), None, None)
                }
                "keyword_separator" => {
                    keyword_only = true;
                    (None, None, None)
                }
                _ => (None, None, None),
            };
            if kind == ParamKind::Star {
                keyword_only = true;
            }
            if let Some(name) = pname {
                out.push((
                    PParam {
                        name,
                        kind,
                        default,
                    },
                    ann,
                ));
            }
        }
        out
    }

    /// Decorator expressions, evaluated by the enclosing scope at definition time: each is
    /// called with the decorated object (`@dec(x)` calls `dec(x)`, then its result).
    fn decorators(&mut self, decorators: &[Node<'_>]) -> Vec<u32> {
        let mut out = Vec::new();
        for d in decorators {
            let Some(expr_node) = d.named_child(0) else {
                continue;
            };
            let callee = self.expr(expr_node, py_kind(expr_node) == "call");
            let call = self.push(PExpr::Call(callee));
            let written = self.t(expr_node).to_owned();
            self.add_ref(PRefKind::Call, call, line(expr_node), &written);
            out.push(callee);
        }
        out
    }

    /// Records a function, method or class definition and binds its name in the current scope,
    /// then makes it the owner of what follows (its decorators are the enclosing scope's). Returns
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
        let decorator_exprs = self.decorators(decorators);
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
            params: Vec::new(),
            returned: Vec::new(),
            yielded: Vec::new(),
            generator: false,
            decorators: decorator_exprs,
            is_static: false,
            is_classmethod: false,
            sets_self: Vec::new(),
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
        self.enter_frame(cscope);
        if let Some(body) = body {
            self.block(body);
        }
        self.leave_frame();
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
                self.order_star((self.file.star_imports.len() - 1) as u32);
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
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return self.push_other();
        };
        match py_kind(node) {
            "identifier" => {
                let name = self.t(node).to_owned();
                let e = self.push(PExpr::Name {
                    scope: self.scope,
                    name: name.clone(),
                });
                self.order_read(e, &name);
                let object = std::mem::take(&mut self.object_ctx);
                if !object {
                    self.order_escape(&name);
                }
                self.self_used(&name, object);
                if value_pos {
                    self.add_ref(PRefKind::Use, e, line(node), &name);
                }
                e
            }
            "attribute" => {
                let object = match field!(node, "object") {
                    Some(o) => self.object_expr(o, false),
                    None => self.push(PExpr::Other),
                };
                let attr = field!(node, "attribute")
                    .map_or("", |a| self.t(a))
                    .to_owned();
                let e = self.push(PExpr::Attr(object, attr));
                self.object_read(object, e);
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
                let mut call_args = Vec::new();
                if let Some(args) = args {
                    let mut c = args.walk();
                    let items: Vec<Node<'_>> = args.named_children(&mut c).collect();
                    for item in items {
                        match py_kind(item) {
                            "keyword_argument" => {
                                if let Some(v) = field!(item, "value") {
                                    let e = self.expr(v, true);
                                    if let Some(name) = field!(item, "name") {
                                        call_args.push(PArg::Kw(self.t(name).to_owned(), e));
                                    }
                                }
                            }
                            "list_splat" => {
                                if let Some(v) = item.named_child(0) {
                                    let e = self.expr(v, true);
                                    call_args.push(PArg::Star(e));
                                }
                            }
                            "dictionary_splat" => {
                                if let Some(v) = item.named_child(0) {
                                    let e = self.expr(v, true);
                                    call_args.push(PArg::DoubleStar(e));
                                }
                            }
                            "comment" => {}
                            _ => {
                                let e = self.expr(item, true);
                                call_args.push(PArg::Pos(e));
                            }
                        }
                    }
                }
                self.calls_built += 1;
                match callee {
                    None => {
                        self.self_called();
                        self.push(PExpr::Super { scope: self.scope })
                    }
                    Some(callee) => {
                        let e = self.push(PExpr::Call(callee));
                        self.method_called(callee, e);
                        let written = self.t(function).to_owned();
                        self.add_ref(PRefKind::Call, e, end_line(function), &written);
                        self.container_store(callee, &call_args);
                        let literal = self.builtin_literal(callee, &call_args);
                        if !call_args.is_empty() {
                            self.file.calls.push(PCall {
                                call: e,
                                args: call_args,
                            });
                        }
                        // The call is referenced (`e`); its value is the container it builds.
                        literal.unwrap_or(e)
                    }
                }
            }
            "await" => {
                self.calls_built += 1;
                match node.named_child(0) {
                    Some(inner) => self.expr(inner, value_pos),
                    None => self.push(PExpr::Other),
                }
            }
            "parenthesized_expression" => match node.named_child(0) {
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
            "lambda" => self.lambda(node),
            "list" | "tuple" | "set" | "expression_list" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                let indexed = !children
                    .iter()
                    .any(|n| matches!(py_kind(n), "list_splat" | "parenthesized_list_splat"));
                let items = children
                    .into_iter()
                    .filter(|n| py_kind(n) != "comment")
                    .map(|n| self.expr(n, true))
                    .collect();
                self.push(PExpr::Seq { items, indexed })
            }
            "list_splat" => match node.named_child(0) {
                // `[*xs]`: the items of `xs`.
                Some(inner) => {
                    let e = self.expr(inner, true);
                    self.push(PExpr::Subscript(e, None))
                }
                None => self.push(PExpr::Other),
            },
            "dictionary" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                let mut items = Vec::new();
                for child in children {
                    match py_kind(child) {
                        "pair" => {
                            let key = field!(child, "key");
                            let k = key.and_then(|k| const_key(py_kind(k), self.t(k)));
                            if let Some(kn) = key {
                                self.expr(kn, true);
                            }
                            if let Some(v) = field!(child, "value") {
                                let e = self.expr(v, true);
                                items.push((k, e));
                            }
                        }
                        "comment" => {}
                        _ => {
                            self.expr(child, true);
                            // `{**other}`: its keys are not known here.
                            items.push((None, self.push_other()));
                        }
                    }
                }
                self.push(PExpr::Dict(items))
            }
            "subscript" => {
                let object = match field!(node, "value") {
                    Some(v) => self.object_expr(v, value_pos),
                    None => self.push(PExpr::Other),
                };
                let mut key = self.subscript_key(node);
                let mut c = node.walk();
                let keys: Vec<Node<'_>> =
                    node.children_by_field_name("subscript", &mut c).collect();
                if key.is_none() && matches!(keys.as_slice(), [k] if py_kind(*k) == "identifier") {
                    // Resolved when evaluated, from the name expression pushed next.
                    key = Some(NAME_KEY.to_owned());
                }
                for k in keys {
                    self.expr(k, true);
                }
                let e = self.push(PExpr::Subscript(object, key));
                self.object_read(object, e);
                e
            }
            "yield" => {
                // Other code runs while a generator is suspended.
                self.calls_built += 1;
                let from = self
                    .t(node)
                    .trim_start_matches("yield")
                    .trim_start()
                    .starts_with("from");
                let value = node.named_child(0).map(|v| self.expr(v, true));
                if let Some(f) = self.func {
                    let def = &mut self.file.defs[f as usize];
                    def.generator = true;
                    if let Some(v) = value {
                        def.yielded.push(v);
                    }
                }
                if from && let (Some(v), Some(f)) = (value, self.func) {
                    // `yield from xs` yields the items of `xs`.
                    let items = self.push(PExpr::Subscript(v, None));
                    let def = &mut self.file.defs[f as usize];
                    def.yielded.pop();
                    def.yielded.push(items);
                }
                self.push(PExpr::Other)
            }
            "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => {
                let scope = self.new_scope(ScopeKind::Function, None);
                let saved = self.scope;
                self.scope = scope;
                self.enter_frame(scope);
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in &children {
                    if py_kind(child) == "for_in_clause" {
                        let iterated = field!(*child, "right").map(|right| {
                            let e = self.expr(right, true);
                            let written = self.t(right).to_owned();
                            self.add_ref(PRefKind::Iter, e, line(right), &written);
                            e
                        });
                        if let Some(left) = field!(*child, "left") {
                            self.bind_iteration(left, iterated);
                        }
                    }
                }
                let mut element = None;
                for child in children {
                    match py_kind(child) {
                        "for_in_clause" => {}
                        "pair" => {
                            if let Some(k) = field!(child, "key") {
                                self.expr(k, true);
                            }
                            element = field!(child, "value").map(|v| self.expr(v, true));
                        }
                        "if_clause" => {
                            self.expr(child, true);
                        }
                        _ => element = Some(self.expr(child, true)),
                    }
                }
                self.leave_frame();
                self.scope = saved;
                match (py_kind(node), element) {
                    ("dictionary_comprehension", Some(e)) => {
                        self.push(PExpr::Dict(vec![(None, e)]))
                    }
                    (_, Some(e)) => self.push(PExpr::Seq {
                        items: vec![e],
                        indexed: false,
                    }),
                    _ => self.push(PExpr::Other),
                }
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
                let e = self.push(PExpr::Other);
                if py_kind(node) == "string"
                    && let Some(k) = const_key("string", self.t(node))
                    && let Some(k) = k.strip_prefix("s:")
                {
                    self.file.strings.push((e, k.to_owned()));
                }
                e
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

impl PyBuilder<'_> {
    fn push_other(&mut self) -> u32 {
        self.push(PExpr::Other)
    }

    /// `xs.append(v)`, `xs.add(v)`, `xs.insert(i, v)`, `d.update(m)`, `xs.extend(ys)`,
    /// `d.setdefault(k, v)`: flow-insensitive stores into the container `xs`/`d`.
    fn container_store(&mut self, callee: u32, args: &[PArg]) {
        let Some(PExpr::Attr(target, method)) = self.file.exprs.get(callee as usize) else {
            return;
        };
        let target = *target;
        let store = match (method.as_str(), args) {
            ("append" | "add", [PArg::Pos(v)]) => PStore::Append { target, value: *v },
            // An insertion can land at any index.
            ("insert", [_, PArg::Pos(v)]) => PStore::Item {
                target,
                key: None,
                value: *v,
            },
            ("update" | "extend", [PArg::Pos(v)]) => PStore::Extend { target, value: *v },
            ("setdefault", [PArg::Pos(k), PArg::Pos(v)]) => {
                let key = self
                    .file
                    .strings
                    .iter()
                    .rev()
                    .find(|(e, _)| e == k)
                    .map(|(_, s)| format!("s:{s}"));
                PStore::Item {
                    target,
                    key,
                    value: *v,
                }
            }
            ("update", _) if args.iter().all(|a| matches!(a, PArg::Kw(..))) => {
                // `d.update(name=value, …)`.
                for a in args {
                    if let PArg::Kw(name, v) = a {
                        self.file.stores.push(PStore::Item {
                            target,
                            key: Some(format!("s:{name}")),
                            value: *v,
                        });
                    }
                }
                return;
            }
            _ => return,
        };
        self.file.stores.push(store);
    }

    /// Built-ins whose result is a container of their arguments, built as the literal they
    /// amount to (an update's fast path then compares its items like a literal's; it does not
    /// compare call arguments): `dict(k=v, …)` and `dict.fromkeys(ks, v)` as `{"k": v}`;
    /// `map(f, xs, …)` as a comprehension whose item is a call of `f`, `filter(f, xs)` as one
    /// whose item is any item of `xs`. Other forms stay opaque calls.
    fn builtin_literal(&mut self, callee: u32, args: &[PArg]) -> Option<u32> {
        if let PExpr::Name { name, .. } = self.file.exprs.get(callee as usize)? {
            let item = match (name.as_str(), args) {
                ("map", [PArg::Pos(f), PArg::Pos(_), ..]) => {
                    let f = *f;
                    self.push(PExpr::Call(f))
                }
                ("filter", [PArg::Pos(_), PArg::Pos(xs)]) => {
                    let xs = *xs;
                    self.push(PExpr::Subscript(xs, None))
                }
                _ => return self.dict_literal(callee, args),
            };
            return Some(self.push(PExpr::Seq {
                items: vec![item],
                indexed: false,
            }));
        }
        self.dict_literal(callee, args)
    }

    fn dict_literal(&mut self, callee: u32, args: &[PArg]) -> Option<u32> {
        let entries = match self.file.exprs.get(callee as usize)? {
            PExpr::Name { name, .. } if name == "dict" => args
                .iter()
                .map(|a| match a {
                    PArg::Kw(name, v) => Some((Some(format!("s:{name}")), *v)),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?,
            PExpr::Attr(obj, method) if method == "fromkeys" => {
                match (self.file.exprs.get(*obj as usize)?, args) {
                    (PExpr::Name { name, .. }, [PArg::Pos(_), PArg::Pos(v)]) if name == "dict" => {
                        vec![(None, *v)]
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(self.push(PExpr::Dict(entries)))
    }

    /// A lambda: a function definition named after its parent and position
    /// (`<parent>.<lambda@LINE:COL>`), whose body is its returned value.
    fn lambda(&mut self, node: Node<'_>) -> u32 {
        let pos = node.start_position();
        let name = format!("<lambda@{}:{}>", pos.row + 1, pos.column + 1);
        let qname = format!("{}.{name}", self.qprefix());
        let def_idx = self.file.defs.len() as u32;
        let saved_owner = self.declare_lambda(node, &name, qname.clone());
        let params = match field!(node, "parameters") {
            Some(plist) => self.parameters(plist),
            None => Vec::new(),
        };
        let scope = self.new_scope(ScopeKind::Function, None);
        self.file.defs[def_idx as usize].scope = scope;
        let saved_scope = self.scope;
        let saved_func = self.func.replace(def_idx);
        self.scope = scope;
        self.enter_frame(scope);
        for (i, (p, _)) in params.iter().enumerate() {
            self.bind(
                &p.name,
                PBind::Param {
                    def: def_idx,
                    index: i as u32,
                    annotation: None,
                },
            );
        }
        self.file.defs[def_idx as usize].params = params.into_iter().map(|(p, _)| p).collect();
        if let Some(body) = field!(node, "body") {
            let e = self.expr(body, true);
            self.file.defs[def_idx as usize].returned.push(e);
        }
        self.leave_frame();
        self.scope = saved_scope;
        self.func = saved_func;
        self.owner = saved_owner;
        self.push(PExpr::Lambda(qname))
    }

    /// Records a lambda's definition (not bound to any name) and makes it the owner.
    fn declare_lambda(&mut self, node: Node<'_>, name: &str, qname: String) -> u32 {
        let parent = self.qprefix();
        let signature = crate::index::syntax::collapse(self.t(node), 120);
        self.file.defs.push(PyDef {
            qname: qname.clone(),
            name: name.to_owned(),
            kind: DefKind::Function,
            line: line(node),
            end_line: end_line(node),
            signature,
            doc: None,
            parent,
            bases: Vec::new(),
            scope: 0,
            returns: None,
            self_attrs: Vec::new(),
            params: Vec::new(),
            returned: Vec::new(),
            yielded: Vec::new(),
            generator: false,
            decorators: Vec::new(),
            is_static: false,
            is_classmethod: false,
            sets_self: Vec::new(),
        });
        let saved_owner = self.owner;
        self.file.owners.push(qname);
        self.owner = (self.file.owners.len() - 1) as u32;
        saved_owner
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
    let Some(_depth) = crate::index::depth::Depth::enter() else {
        return;
    };
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
