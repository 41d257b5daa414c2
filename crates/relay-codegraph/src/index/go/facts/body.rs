//! Go function bodies into the reference IR, with lexical scopes.

use rustc_hash::FxHashMap as HashMap;

use tree_sitter::Node;

use super::{GBind, GExpr, GFlow, GRef, GRefKind, GSink, GType, GoBody, GoSig};
use crate::index::syntax::{field, go_kind, line, text};

/// Node kinds that are types.
fn is_type_node(kind: &str) -> bool {
    matches!(
        kind,
        "type_identifier"
            | "qualified_type"
            | "pointer_type"
            | "slice_type"
            | "array_type"
            | "implicit_length_array_type"
            | "map_type"
            | "channel_type"
            | "function_type"
            | "struct_type"
            | "interface_type"
            | "generic_type"
            | "parenthesized_type"
            | "negated_type"
    )
}

/// Builds one [`GoBody`].
pub(crate) struct BodyBuilder<'s> {
    src: &'s [u8],
    body: GoBody,
    scopes: Vec<HashMap<String, u32>>,
    /// Nesting of function literals (their `return`s are not the function's).
    closures: u32,
    /// Results of the function (for a `return` of one multi-value call).
    result_count: u32,
    /// Bindings declared by the current parameter list (`u32::MAX` for `_`).
    declared: Vec<u32>,
}

impl<'s> BodyBuilder<'s> {
    pub(crate) fn new(src: &'s [u8]) -> Self {
        BodyBuilder {
            src,
            body: GoBody::default(),
            scopes: Vec::new(),
            closures: 0,
            result_count: 0,
            declared: Vec::new(),
        }
    }

    /// Continues an existing body (the package initializers).
    pub(crate) fn resume(src: &'s [u8], body: GoBody) -> Self {
        BodyBuilder {
            src,
            body,
            scopes: Vec::new(),
            closures: 0,
            result_count: 0,
            declared: Vec::new(),
        }
    }

    /// Copies the type-parameter scope of an enclosing declaration.
    pub(crate) fn inherit_scopes(&mut self, other: &BodyBuilder<'_>) {
        for scope in &other.scopes {
            self.push_scope();
            for name in scope.keys() {
                self.declare(name.clone(), GBind::TypeName);
            }
        }
    }

    pub(crate) fn finish(mut self, owner: String) -> GoBody {
        self.body.owner = owner;
        self.body
    }

    pub(crate) fn finish_resumed(self) -> GoBody {
        self.body
    }

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(HashMap::default());
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    pub(crate) fn declare(&mut self, name: String, bind: GBind) {
        if name == "_" || name.is_empty() {
            return;
        }
        let id = self.body.bindings.len() as u32;
        self.body.bindings.push(bind);
        if self.scopes.is_empty() {
            self.push_scope();
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, id);
        }
    }

    fn lookup(&self, name: &str) -> Option<u32> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn flow(&mut self, to: GSink, from: u32, idx: u32) {
        self.body.flows.push(GFlow { to, from, idx });
    }

    /// Records the flows of `lefts = rights` (pairwise, or the values of one multi-value
    /// expression).
    fn flows_to(&mut self, lefts: &[GSink], rights: &[u32]) {
        if lefts.len() == rights.len() {
            for (to, from) in lefts.iter().zip(rights) {
                self.flow(to.clone(), *from, 0);
            }
        } else if let [from] = rights {
            for (i, to) in lefts.iter().enumerate() {
                self.flow(to.clone(), *from, i as u32);
            }
        }
    }

    /// A function declaration's signature: as [`Self::signature`], also recording which
    /// bindings are its parameters and results.
    pub(crate) fn function_signature(
        &mut self,
        params: Option<Node<'_>>,
        result: Option<Node<'_>>,
    ) -> GoSig {
        self.declared.clear();
        let mut sig = self.signature(params, None, true);
        let param_bindings = std::mem::take(&mut self.declared);
        let results = self.signature(None, result, true);
        let result_bindings = std::mem::take(&mut self.declared);
        sig.results = results.results;
        if param_bindings.len() == sig.params.len() {
            self.body.params = param_bindings;
        } else {
            self.body.params = vec![u32::MAX; sig.params.len()];
        }
        if result_bindings.len() == sig.results.len() {
            self.body
                .zeroed
                .extend(result_bindings.iter().filter(|b| **b != u32::MAX));
            self.body.results = result_bindings;
        }
        self.result_count = sig.results.len() as u32;
        sig
    }

    fn push(&mut self, expr: GExpr) -> u32 {
        self.body.exprs.push(expr);
        (self.body.exprs.len() - 1) as u32
    }

    fn add_ref(&mut self, kind: GRefKind, expr: u32, line: u32, name: &str) {
        self.body.refs.push(GRef {
            kind,
            expr,
            line,
            name: crate::index::syntax::collapse(name, 120),
        });
    }

    /// Declares type parameters (and records uses in their constraints).
    pub(crate) fn type_params(&mut self, list: Node<'_>) {
        let mut c = list.walk();
        let decls: Vec<Node<'_>> = list.named_children(&mut c).collect();
        for decl in &decls {
            let mut c2 = decl.walk();
            for name in decl.children_by_field_name("name", &mut c2) {
                self.declare(text(name, self.src).to_owned(), GBind::TypeName);
            }
        }
        for decl in decls {
            if let Some(constraint) = field!(decl, "type") {
                self.use_type(constraint);
            }
        }
    }

    /// Declares parameters and results, records their type uses, and returns the signature.
    pub(crate) fn signature(
        &mut self,
        params: Option<Node<'_>>,
        result: Option<Node<'_>>,
        declare: bool,
    ) -> GoSig {
        let mut sig = GoSig::default();
        if let Some(params) = params {
            self.param_list(params, declare, &mut sig.params, &mut sig.variadic);
        }
        if let Some(result) = result {
            if go_kind(result) == "parameter_list" {
                let mut variadic = false;
                self.param_list(result, declare, &mut sig.results, &mut variadic);
            } else {
                sig.results.push(self.ty(result));
                self.use_type(result);
            }
        }
        sig
    }

    fn param_list(
        &mut self,
        list: Node<'_>,
        declare: bool,
        out: &mut Vec<GType>,
        variadic: &mut bool,
    ) {
        let mut c = list.walk();
        let params: Vec<Node<'_>> = list.named_children(&mut c).collect();
        for param in params {
            let Some(ty_node) = field!(param, "type") else {
                continue;
            };
            let mut ty = self.ty(ty_node);
            if go_kind(param) == "variadic_parameter_declaration" {
                ty = GType::Slice(Box::new(ty));
                *variadic = true;
            }
            self.use_type(ty_node);
            let mut c2 = param.walk();
            let names: Vec<String> = param
                .children_by_field_name("name", &mut c2)
                .map(|n| text(n, self.src).to_owned())
                .collect();
            if names.is_empty() {
                out.push(ty);
            } else {
                for name in names {
                    out.push(ty.clone());
                    if declare {
                        if name == "_" {
                            self.declared.push(u32::MAX);
                        } else {
                            self.declared.push(self.body.bindings.len() as u32);
                        }
                        self.declare(name, GBind::Declared(ty.clone()));
                    }
                }
            }
        }
    }

    /// Converts a type node, honouring local types and type parameters.
    pub(crate) fn ty(&mut self, node: Node<'_>) -> GType {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return GType::Unknown;
        };
        match go_kind(node) {
            "type_identifier" | "identifier" => {
                let name = text(node, self.src);
                if self.lookup(name).is_some() {
                    GType::Unknown
                } else {
                    GType::Named {
                        pkg: None,
                        name: name.to_owned(),
                    }
                }
            }
            "qualified_type" => match (field!(node, "package"), field!(node, "name")) {
                (Some(p), Some(n)) => GType::Named {
                    pkg: Some(text(p, self.src).to_owned()),
                    name: text(n, self.src).to_owned(),
                },
                _ => GType::Unknown,
            },
            "selector_expression" => match (field!(node, "operand"), field!(node, "field")) {
                (Some(p), Some(n))
                    if go_kind(p) == "identifier" && self.lookup(text(p, self.src)).is_none() =>
                {
                    GType::Named {
                        pkg: Some(text(p, self.src).to_owned()),
                        name: text(n, self.src).to_owned(),
                    }
                }
                _ => GType::Unknown,
            },
            "pointer_type" => match node.named_child(0) {
                Some(inner) => GType::Pointer(Box::new(self.ty(inner))),
                None => GType::Unknown,
            },
            "slice_type" | "array_type" | "implicit_length_array_type" => {
                match field!(node, "element") {
                    Some(inner) => GType::Slice(Box::new(self.ty(inner))),
                    None => GType::Unknown,
                }
            }
            "map_type" => match (field!(node, "key"), field!(node, "value")) {
                (Some(k), Some(v)) => GType::Map(Box::new(self.ty(k)), Box::new(self.ty(v))),
                _ => GType::Unknown,
            },
            "channel_type" => match field!(node, "value") {
                Some(inner) => GType::Chan(Box::new(self.ty(inner))),
                None => GType::Unknown,
            },
            "function_type" => {
                let mut results = Vec::new();
                if let Some(result) = field!(node, "result") {
                    if go_kind(result) == "parameter_list" {
                        let mut c = result.walk();
                        let params: Vec<Node<'_>> = result.named_children(&mut c).collect();
                        for p in params {
                            if let Some(t) = field!(p, "type") {
                                let ty = self.ty(t);
                                let mut c2 = p.walk();
                                let n = p.children_by_field_name("name", &mut c2).count().max(1);
                                results.extend(std::iter::repeat_n(ty, n));
                            }
                        }
                    } else {
                        results.push(self.ty(result));
                    }
                }
                GType::Func(results)
            }
            "generic_type" => match field!(node, "type") {
                Some(inner) => self.ty(inner),
                None => GType::Unknown,
            },
            "parenthesized_type" | "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.ty(inner),
                None => GType::Unknown,
            },
            _ => GType::Unknown,
        }
    }

    /// Records a `Use` reference for every named type inside a type node.
    pub(crate) fn use_type(&mut self, node: Node<'_>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        match go_kind(node) {
            "type_identifier" => {
                let name = text(node, self.src);
                if self.lookup(name).is_none() {
                    let e = self.push(GExpr::Type(Box::new(GType::Named {
                        pkg: None,
                        name: name.to_owned(),
                    })));
                    self.add_ref(GRefKind::Use, e, line(node), name);
                }
            }
            "qualified_type" => {
                let ty = self.ty(node);
                let written = text(node, self.src).to_owned();
                let e = self.push(GExpr::Type(Box::new(ty)));
                self.add_ref(GRefKind::Use, e, line(node), &written);
            }
            // Array lengths and the like are expressions.
            "identifier" | "int_literal" | "binary_expression" | "selector_expression" => {
                if go_kind(node) != "int_literal" {
                    self.expr(node, true);
                }
            }
            _ => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    if matches!(go_kind(child), "field_identifier" | "comment") {
                        continue;
                    }
                    // Parameter names inside function types are not uses.
                    if go_kind(child) == "identifier"
                        && matches!(
                            go_kind(node),
                            "parameter_declaration" | "variadic_parameter_declaration"
                        )
                    {
                        continue;
                    }
                    self.use_type(child);
                }
            }
        }
    }

    /// Visits a statement (or any node), maintaining scopes.
    pub(crate) fn stmt(&mut self, node: Node<'_>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        match go_kind(node) {
            "block" => {
                self.push_scope();
                self.children(node);
                self.pop_scope();
            }
            "statement_list"
            | "labeled_statement"
            | "expression_statement"
            | "go_statement"
            | "defer_statement"
            | "inc_statement"
            | "dec_statement"
            | "send_statement"
            | "expression_list"
            | "default_case" => self.children(node),
            "label_name"
            | "comment"
            | "break_statement"
            | "continue_statement"
            | "goto_statement"
            | "fallthrough_statement"
            | "empty_statement" => {}
            "short_var_declaration" => self.short_var(node),
            "return_statement" => self.return_statement(node),
            "assignment_statement" => {
                let mut sides = [Vec::new(), Vec::new()];
                for (i, side) in [field!(node, "left"), field!(node, "right")]
                    .into_iter()
                    .enumerate()
                {
                    let Some(side) = side else { continue };
                    let mut c = side.walk();
                    let items: Vec<Node<'_>> = side.named_children(&mut c).collect();
                    for item in items {
                        if go_kind(item) == "comment" {
                            continue;
                        }
                        sides[i].push(self.expr(item, true));
                    }
                }
                if field!(node, "operator").is_some_and(|op| text(op, self.src) == "=") {
                    let [lefts, rights] = sides;
                    let lefts: Vec<GSink> = lefts.into_iter().map(GSink::Place).collect();
                    self.flows_to(&lefts, &rights);
                }
            }
            "var_declaration" | "const_declaration" => self.local_values(node),
            "type_declaration" => {
                let mut c = node.walk();
                let specs: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for spec in &specs {
                    if let Some(name) = field!(*spec, "name") {
                        self.declare(text(name, self.src).to_owned(), GBind::TypeName);
                    }
                }
                for spec in specs {
                    if let Some(ty) = field!(spec, "type") {
                        self.use_type(ty);
                    }
                }
            }
            "if_statement" => {
                self.push_scope();
                for child in [
                    field!(node, "initializer"),
                    field!(node, "condition"),
                    field!(node, "consequence"),
                    field!(node, "alternative"),
                ]
                .into_iter()
                .flatten()
                {
                    self.stmt(child);
                }
                self.pop_scope();
            }
            "for_statement" => self.for_statement(node),
            "expression_switch_statement" => {
                self.push_scope();
                if let Some(init) = field!(node, "initializer") {
                    self.stmt(init);
                }
                if let Some(value) = field!(node, "value") {
                    self.expr(value, true);
                }
                let mut c = node.walk();
                let cases: Vec<Node<'_>> = node
                    .named_children(&mut c)
                    .filter(|n| matches!(go_kind(n), "expression_case" | "default_case"))
                    .collect();
                for case in cases {
                    self.push_scope();
                    self.children(case);
                    self.pop_scope();
                }
                self.pop_scope();
            }
            "type_switch_statement" => self.type_switch(node),
            "select_statement" => {
                let mut c = node.walk();
                let cases: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for case in cases {
                    self.push_scope();
                    if let Some(comm) = field!(case, "communication") {
                        if go_kind(comm) == "receive_statement" && has_token(comm, ":=") {
                            if let Some(right) = field!(comm, "right") {
                                self.expr(right, true);
                            }
                            if let Some(left) = field!(comm, "left") {
                                let mut c2 = left.walk();
                                let names: Vec<String> = left
                                    .named_children(&mut c2)
                                    .map(|n| text(n, self.src).to_owned())
                                    .collect();
                                for n in names {
                                    self.declare(n, GBind::Unknown);
                                }
                            }
                        } else {
                            self.children(comm);
                        }
                    }
                    let mut c2 = case.walk();
                    let lists: Vec<Node<'_>> = case
                        .named_children(&mut c2)
                        .filter(|n| go_kind(n) == "statement_list")
                        .collect();
                    for l in lists {
                        self.stmt(l);
                    }
                    self.pop_scope();
                }
            }
            kind if is_type_node(kind) => self.use_type(node),
            _ => {
                self.expr(node, true);
            }
        }
    }

    fn return_statement(&mut self, node: Node<'_>) {
        let mut values = Vec::new();
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            if go_kind(child) == "expression_list" {
                let mut c2 = child.walk();
                let items: Vec<Node<'_>> = child.named_children(&mut c2).collect();
                for item in items {
                    if go_kind(item) != "comment" {
                        values.push(self.expr(item, true));
                    }
                }
            } else if go_kind(child) != "comment" {
                values.push(self.expr(child, true));
            }
        }
        if self.closures > 0 {
            return;
        }
        if values.is_empty() {
            // A bare return: the named results' current values.
            let results = self.body.results.clone();
            for (i, b) in results.into_iter().enumerate() {
                if b != u32::MAX {
                    let local = self.push(GExpr::Local(b));
                    self.flow(GSink::Return(i as u32), local, 0);
                }
            }
            return;
        }
        let sinks: Vec<GSink> = (0..self.result_count.max(values.len() as u32))
            .map(GSink::Return)
            .collect();
        self.flows_to(&sinks, &values);
    }

    fn children(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            self.stmt(child);
        }
    }

    fn short_var(&mut self, node: Node<'_>) {
        let mut rights = Vec::new();
        if let Some(right) = field!(node, "right") {
            let mut c = right.walk();
            let items: Vec<Node<'_>> = right.named_children(&mut c).collect();
            for item in items {
                rights.push(self.expr(item, true));
            }
        }
        if let Some(left) = field!(node, "left") {
            let mut c = left.walk();
            let names: Vec<String> = left
                .named_children(&mut c)
                .map(|n| text(n, self.src).to_owned())
                .collect();
            let count = names.len();
            for (i, name) in names.into_iter().enumerate() {
                let bind = if rights.len() == count {
                    GBind::Init {
                        expr: rights[i],
                        idx: 0,
                    }
                } else if rights.len() == 1 {
                    GBind::Init {
                        expr: rights[0],
                        idx: i as u32,
                    }
                } else {
                    GBind::Unknown
                };
                self.declare(name, bind);
            }
        }
    }

    fn local_values(&mut self, node: Node<'_>) {
        let mut specs = Vec::new();
        collect_specs(node, &mut specs);
        for spec in specs {
            let ty = field!(spec, "type").map(|t| {
                self.use_type(t);
                self.ty(t)
            });
            let mut rights = Vec::new();
            if let Some(value) = field!(spec, "value") {
                let mut c = value.walk();
                let items: Vec<Node<'_>> = value.named_children(&mut c).collect();
                for item in items {
                    rights.push(self.expr(item, true));
                }
            }
            let mut c = spec.walk();
            let names: Vec<String> = spec
                .children_by_field_name("name", &mut c)
                .map(|n| text(n, self.src).to_owned())
                .collect();
            let count = names.len();
            for (i, name) in names.into_iter().enumerate() {
                if ty.is_some() && name != "_" {
                    // `var x T` starts at the zero value; `var x T = v` also gets `v`.
                    let id = self.body.bindings.len() as u32;
                    self.body.zeroed.push(id);
                    let local = self.push(GExpr::Local(id));
                    if rights.len() == count {
                        self.flow(GSink::Place(local), rights[i], 0);
                    } else if rights.len() == 1 {
                        self.flow(GSink::Place(local), rights[0], i as u32);
                    }
                }
                let bind = match (&ty, rights.len()) {
                    (Some(t), _) => GBind::Declared(t.clone()),
                    (None, n) if n == count => GBind::Init {
                        expr: rights[i],
                        idx: 0,
                    },
                    (None, 1) => GBind::Init {
                        expr: rights[0],
                        idx: i as u32,
                    },
                    _ => GBind::Unknown,
                };
                self.declare(name, bind);
            }
        }
    }

    fn for_statement(&mut self, node: Node<'_>) {
        self.push_scope();
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            match go_kind(child) {
                "for_clause" => {
                    for part in [
                        field!(child, "initializer"),
                        field!(child, "condition"),
                        field!(child, "update"),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        self.stmt(part);
                    }
                }
                "range_clause" => {
                    let right = field!(child, "right").map(|r| self.expr(r, true));
                    if let Some(left) = field!(child, "left") {
                        if has_token(child, ":=") {
                            let mut c2 = left.walk();
                            let names: Vec<String> = left
                                .named_children(&mut c2)
                                .map(|n| text(n, self.src).to_owned())
                                .collect();
                            for (i, name) in names.into_iter().enumerate() {
                                let bind = match (right, i) {
                                    (Some(r), 0) => GBind::RangeKey(r),
                                    (Some(r), 1) => GBind::RangeValue(r),
                                    _ => GBind::Unknown,
                                };
                                self.declare(name, bind);
                            }
                        } else {
                            self.children(left);
                        }
                    }
                }
                _ => self.stmt(child),
            }
        }
        self.pop_scope();
    }

    fn type_switch(&mut self, node: Node<'_>) {
        self.push_scope();
        if let Some(init) = field!(node, "initializer") {
            self.stmt(init);
        }
        let value = field!(node, "value").map(|v| self.expr(v, true));
        let alias = field!(node, "alias")
            .and_then(|a| a.named_child(0).map(|n| text(n, self.src).to_owned()));
        let mut c = node.walk();
        let cases: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for case in cases {
            if !matches!(go_kind(case), "type_case" | "default_case") {
                continue;
            }
            self.push_scope();
            let mut c2 = case.walk();
            let types: Vec<Node<'_>> = case.children_by_field_name("type", &mut c2).collect();
            let mut case_types = Vec::new();
            for t in &types {
                self.use_type(*t);
                case_types.push(self.ty(*t));
            }
            if let Some(alias) = &alias {
                if case_types.len() == 1
                    && alias != "_"
                    && let Some(v) = value
                {
                    // The case's variable holds the switched value (as the case's type).
                    let id = self.body.bindings.len() as u32;
                    self.body.zeroed.push(id);
                    let local = self.push(GExpr::Local(id));
                    self.flow(GSink::Place(local), v, 0);
                }
                let bind = if case_types.len() == 1 {
                    GBind::Declared(case_types.pop().unwrap_or(GType::Unknown))
                } else {
                    match value {
                        Some(v) => GBind::Init { expr: v, idx: 0 },
                        None => GBind::Unknown,
                    }
                };
                self.declare(alias.clone(), bind);
            }
            let mut c3 = case.walk();
            let lists: Vec<Node<'_>> = case
                .named_children(&mut c3)
                .filter(|n| go_kind(n) == "statement_list")
                .collect();
            for l in lists {
                self.stmt(l);
            }
            self.pop_scope();
        }
        self.pop_scope();
    }

    /// Builds an expression, recording calls (and, in value position, identifier/selector uses).
    pub(crate) fn expr(&mut self, node: Node<'_>, value_pos: bool) -> u32 {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return self.push(GExpr::Unknown);
        };
        match go_kind(node) {
            "identifier" => {
                let name = text(node, self.src);
                if name == "_" {
                    return self.push(GExpr::Unknown);
                }
                match self.lookup(name) {
                    Some(id) => self.push(GExpr::Local(id)),
                    None => {
                        let name = name.to_owned();
                        let e = self.push(GExpr::Free(name.clone()));
                        if value_pos {
                            self.add_ref(GRefKind::Use, e, line(node), &name);
                        }
                        e
                    }
                }
            }
            "selector_expression" => {
                let operand = match field!(node, "operand") {
                    Some(op) => self.expr(op, false),
                    None => self.push(GExpr::Unknown),
                };
                let field = field!(node, "field")
                    .map_or("", |f| text(f, self.src))
                    .to_owned();
                let e = self.push(GExpr::Selector(operand, field));
                if value_pos {
                    let written = text(node, self.src).to_owned();
                    self.add_ref(GRefKind::Use, e, end_line_of(node), &written);
                }
                e
            }
            "call_expression" => self.call(node),
            "composite_literal" => {
                let ty = match field!(node, "type") {
                    Some(t) => {
                        self.use_type(t);
                        self.ty(t)
                    }
                    None => GType::Unknown,
                };
                if let Some(body) = field!(node, "body") {
                    self.literal_value(body, Some(&ty));
                }
                self.push(GExpr::Composite(Box::new(ty)))
            }
            "literal_value" => {
                self.literal_value(node, None);
                self.push(GExpr::Unknown)
            }
            "unary_expression" => {
                let op = field!(node, "operator").map_or("", |o| text(o, self.src));
                let operand = field!(node, "operand");
                match (op, operand) {
                    ("&" | "*", Some(inner)) => self.expr(inner, true),
                    ("<-", Some(inner)) => {
                        self.expr(inner, true);
                        self.push(GExpr::Unknown)
                    }
                    // `-x`, `!x`, `^x`: a number or a boolean.
                    (_, Some(inner)) => {
                        self.expr(inner, true);
                        self.push(GExpr::Literal)
                    }
                    _ => self.push(GExpr::Unknown),
                }
            }
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.expr(inner, value_pos),
                None => self.push(GExpr::Unknown),
            },
            "index_expression" => {
                let operand = match field!(node, "operand") {
                    Some(op) => self.expr(op, true),
                    None => self.push(GExpr::Unknown),
                };
                if let Some(index) = field!(node, "index") {
                    self.expr(index, true);
                }
                self.push(GExpr::Index(operand))
            }
            "type_instantiation_expression" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).skip(1).collect();
                for child in children {
                    self.use_type(child);
                }
                match field!(node, "type") {
                    Some(t) if go_kind(t) == "type_identifier" => {
                        let name = text(t, self.src);
                        match self.lookup(name) {
                            Some(id) => self.push(GExpr::Local(id)),
                            None => self.push(GExpr::Free(name.to_owned())),
                        }
                    }
                    Some(t) if go_kind(t) == "qualified_type" => {
                        let pkg = field!(t, "package")
                            .map_or("", |p| text(p, self.src))
                            .to_owned();
                        let name = field!(t, "name")
                            .map_or("", |p| text(p, self.src))
                            .to_owned();
                        let p = self.push(GExpr::Free(pkg));
                        self.push(GExpr::Selector(p, name))
                    }
                    _ => self.push(GExpr::Unknown),
                }
            }
            "type_assertion_expression" => {
                let operand = match field!(node, "operand") {
                    Some(op) => self.expr(op, true),
                    None => self.push(GExpr::Unknown),
                };
                let ty = match field!(node, "type") {
                    Some(t) => {
                        self.use_type(t);
                        self.ty(t)
                    }
                    None => GType::Unknown,
                };
                self.push(GExpr::Assert(Box::new(ty), operand))
            }
            "type_conversion_expression" => {
                let ty = match field!(node, "type") {
                    Some(t) => {
                        self.use_type(t);
                        self.ty(t)
                    }
                    None => GType::Unknown,
                };
                let operand = match field!(node, "operand") {
                    Some(op) => self.expr(op, true),
                    None => self.push(GExpr::Unknown),
                };
                self.push(GExpr::Convert(Box::new(ty), operand))
            }
            "slice_expression" => {
                let operand = match field!(node, "operand") {
                    Some(op) => self.expr(op, true),
                    None => self.push(GExpr::Unknown),
                };
                for part in [
                    field!(node, "start"),
                    field!(node, "end"),
                    field!(node, "capacity"),
                ]
                .into_iter()
                .flatten()
                {
                    self.expr(part, true);
                }
                operand
            }
            "binary_expression" => {
                // Arithmetic, comparison or logic: a number, a string or a boolean.
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    self.stmt(child);
                }
                self.push(GExpr::Literal)
            }
            "func_literal" => {
                self.push_scope();
                let sig = self.signature(field!(node, "parameters"), field!(node, "result"), true);
                self.closures += 1;
                if let Some(body) = field!(node, "body") {
                    self.stmt(body);
                }
                self.closures -= 1;
                self.pop_scope();
                self.push(GExpr::FuncLit(sig.results))
            }
            kind if is_type_node(kind) => {
                self.use_type(node);
                let ty = self.ty(node);
                self.push(GExpr::Type(Box::new(ty)))
            }
            "interpreted_string_literal"
            | "raw_string_literal"
            | "int_literal"
            | "float_literal"
            | "imaginary_literal"
            | "rune_literal"
            | "true"
            | "false"
            | "iota" => self.push(GExpr::Literal),
            "nil" => self.push(GExpr::Nil),
            "comment" | "field_identifier" => self.push(GExpr::Unknown),
            _ => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for child in children {
                    self.stmt(child);
                }
                self.push(GExpr::Unknown)
            }
        }
    }

    fn call(&mut self, node: Node<'_>) -> u32 {
        let Some(function) = field!(node, "function") else {
            return self.push(GExpr::Unknown);
        };
        let args = field!(node, "arguments");
        // `new(T)` and `make(T, ...)` produce a value of type T (or *T).
        if go_kind(function) == "identifier" {
            let name = text(function, self.src);
            if (name == "new" || name == "make") && self.lookup(name).is_none() {
                let first = args.and_then(|a| a.named_child(0));
                if let Some(first) = first {
                    self.use_type(first);
                    let ty = self.ty(first);
                    let mut c = args.map(|a| a.walk());
                    if let (Some(a), Some(c)) = (args, c.as_mut()) {
                        let rest: Vec<Node<'_>> = a.named_children(c).skip(1).collect();
                        for r in rest {
                            self.expr(r, true);
                        }
                    }
                    return self.push(GExpr::Composite(Box::new(ty)));
                }
            }
        }
        let callee = self.expr(function, false);
        if let Some(targs) = field!(node, "type_arguments") {
            self.use_type(targs);
        }
        let e = self.push(GExpr::Call(callee));
        let written = text(function, self.src).to_owned();
        self.add_ref(GRefKind::Call, e, end_line_of(function), &written);
        if let Some(args) = args {
            let mut c = args.walk();
            let items: Vec<Node<'_>> = args.named_children(&mut c).collect();
            let mut idx = 0;
            for item in items {
                match go_kind(item) {
                    "comment" => {}
                    kind if is_type_node(kind) => {
                        self.use_type(item);
                        idx += 1;
                    }
                    _ => {
                        let from = self.expr(item, true);
                        self.flow(GSink::Arg { call: e, idx }, from, 0);
                        idx += 1;
                    }
                }
            }
        }
        e
    }

    /// The elements of a composite literal; with the literal's type, the values flow to its
    /// fields (by name, or by position).
    fn literal_value(&mut self, node: Node<'_>, ty: Option<&GType>) {
        let Some(_depth) = crate::index::depth::Depth::enter() else {
            return;
        };
        let mut c = node.walk();
        let elements: Vec<Node<'_>> = node.named_children(&mut c).collect();
        let mut position = 0u32;
        for element in elements {
            match go_kind(element) {
                "keyed_element" => {
                    // A bare identifier key is a struct field name, not a reference.
                    let mut field_name = None;
                    if let Some(key) = field!(element, "key") {
                        let inner = key.named_child(0);
                        if inner.is_none_or(|k| go_kind(k) != "identifier") {
                            self.literal_element(key, None);
                        } else if let Some(k) = inner {
                            field_name = Some(text(k, self.src).to_owned());
                        }
                    }
                    if let Some(value) = field!(element, "value") {
                        let from = self.literal_element(value, ty);
                        if let (Some(ty), Some(name), Some(from)) = (ty, field_name, from) {
                            let to = GSink::Field {
                                ty: ty.clone(),
                                name,
                            };
                            self.flow(to, from, 0);
                        }
                    }
                }
                "literal_element" => {
                    let from = self.literal_element(element, ty);
                    if let (Some(ty), Some(from)) = (ty, from) {
                        let to = GSink::FieldAt {
                            ty: ty.clone(),
                            idx: position,
                        };
                        self.flow(to, from, 0);
                    }
                    position += 1;
                }
                "comment" => {}
                _ => {
                    self.expr(element, true);
                }
            }
        }
    }

    /// One element of a composite literal of type `ty`: an expression, or a nested literal
    /// whose type is elided (`[]T{{…}}`, `map[K]*T{k: {…}}`: the element type).
    fn literal_element(&mut self, node: Node<'_>, ty: Option<&GType>) -> Option<u32> {
        let inner = node.named_child(0)?;
        if go_kind(inner) == "literal_value" {
            let elem = match ty {
                Some(GType::Slice(e) | GType::Map(_, e)) => match e.as_ref() {
                    GType::Pointer(t) => Some(t.as_ref().clone()),
                    t => Some(t.clone()),
                },
                _ => None,
            };
            self.literal_value(inner, elem.as_ref());
            None
        } else {
            Some(self.expr(inner, true))
        }
    }
}

fn collect_specs<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    let Some(_depth) = crate::index::depth::Depth::enter() else {
        return;
    };
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        match go_kind(child) {
            "var_spec" | "const_spec" => out.push(child),
            "var_spec_list" => collect_specs(child, out),
            _ => {}
        }
    }
}

fn has_token(node: Node<'_>, token: &str) -> bool {
    let mut c = node.walk();
    node.children(&mut c)
        .any(|n| !n.is_named() && go_kind(n) == token)
}

/// Line where a (possibly multi-line) expression ends: the line of a selector's field name.
fn end_line_of(node: Node<'_>) -> u32 {
    node.end_position().row as u32 + 1
}
