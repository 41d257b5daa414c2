//! Compound statements walked in order: each path of an `if`, `match`, loop or `try` starts from
//! the state before it and the paths join after it (see [`super::order`]), and `with` calls its
//! manager's `__enter__`/`__exit__` and binds what `__enter__` returns.

use tree_sitter::Node;

use super::PyBuilder;
use crate::index::python::{PBind, PExpr, PRefKind};
use crate::index::syntax::{field, line, py_kind};

impl PyBuilder<'_> {
    /// `if c: … elif d: … else: …`.
    pub(super) fn if_statement(&mut self, node: Node<'_>) {
        if let Some(c) = field!(node, "condition") {
            self.expr(c, true);
        }
        self.branch_depth += 1;
        let mut fork = self.fork();
        let mut ends = Vec::new();
        if let Some(b) = field!(node, "consequence") {
            self.stmt(b);
        }
        ends.extend(self.current());
        let mut has_else = false;
        let mut c = node.walk();
        let alternatives: Vec<Node<'_>> =
            node.children_by_field_name("alternative", &mut c).collect();
        for alt in alternatives {
            if let Some(f) = &fork {
                self.restore(f);
            }
            match py_kind(alt) {
                "elif_clause" => {
                    if let Some(c) = field!(alt, "condition") {
                        self.expr(c, true);
                    }
                    // The next clause runs when this condition was false.
                    if fork.is_some() {
                        fork = self.fork();
                    }
                    if let Some(b) = field!(alt, "consequence") {
                        self.stmt(b);
                    }
                }
                _ => {
                    has_else = true;
                    self.stmt(alt);
                }
            }
            ends.extend(self.current());
        }
        if let Some(f) = fork {
            if !has_else {
                ends.push(f.frame);
            }
            self.join_paths(ends);
        }
        self.branch_depth -= 1;
    }

    /// `for x in xs: … else: …`.
    pub(super) fn for_statement(&mut self, node: Node<'_>) {
        let iterated = field!(node, "right").map(|right| {
            let e = self.expr(right, true);
            let written = self.t(right).to_owned();
            self.add_ref(PRefKind::Iter, e, line(right), &written);
            e
        });
        // Each iteration calls `__next__`.
        self.calls_built += 1;
        self.branch_depth += 1;
        let tracked = self.loop_begin();
        if let Some(left) = field!(node, "left") {
            self.bind_iteration(left, iterated);
        }
        if let Some(b) = field!(node, "body") {
            self.stmt(b);
        }
        self.loop_exit(node, tracked);
        self.branch_depth -= 1;
    }

    /// `while c: … else: …`.
    pub(super) fn while_statement(&mut self, node: Node<'_>) {
        self.branch_depth += 1;
        let tracked = self.loop_begin();
        if let Some(c) = field!(node, "condition") {
            self.expr(c, true);
        }
        if let Some(b) = field!(node, "body") {
            self.stmt(b);
        }
        self.loop_exit(node, tracked);
        self.branch_depth -= 1;
    }

    /// The end of a loop's body: its `else` clause runs on the normal exit, `break`s skip it.
    fn loop_exit(&mut self, node: Node<'_>, tracked: bool) {
        let breaks = if tracked { self.loop_end() } else { Vec::new() };
        if let Some(e) = field!(node, "alternative") {
            self.stmt(e);
        }
        if tracked {
            let mut ends = breaks;
            ends.extend(self.current());
            self.join_paths(ends);
        }
    }

    /// `try: … except: … else: … finally: …`: a handler can start anywhere in the body.
    pub(super) fn try_statement(&mut self, node: Node<'_>) {
        self.branch_depth += 1;
        let fork = self.fork();
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        let mut try_end = None;
        let mut entry = None;
        let mut body_done = false;
        let mut ends = Vec::new();
        let mut has_else = false;
        let mut finally = None;
        for child in children {
            match py_kind(child) {
                "block" if !body_done => {
                    body_done = true;
                    self.order_try(true);
                    self.stmt(child);
                    self.order_try(false);
                    try_end = self.current();
                    entry = fork
                        .as_ref()
                        .and_then(|f| self.handler_entry(f, try_end.clone()));
                }
                "except_clause" | "except_group_clause" => {
                    if let Some(e) = &entry {
                        self.set_current(e.clone());
                    }
                    self.stmt(child);
                    ends.extend(self.current());
                }
                "else_clause" => {
                    has_else = true;
                    if let Some(t) = &try_end {
                        self.set_current(t.clone());
                    }
                    self.stmt(child);
                    ends.extend(self.current());
                }
                "finally_clause" => finally = Some(child),
                "comment" => {}
                _ => self.stmt(child),
            }
        }
        if fork.is_some() {
            if !has_else {
                ends.extend(try_end);
            }
            self.join_paths(ends);
        }
        if let Some(f) = finally {
            self.stmt(f);
        }
        self.branch_depth -= 1;
    }

    /// `match subject: case …`: each case starts from the state after the subject; none may
    /// match.
    pub(super) fn match_statement(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        self.branch_depth += 1;
        for child in children {
            if py_kind(child) != "block" {
                self.expr(child, true);
                continue;
            }
            let fork = self.fork();
            let mut ends: Vec<_> = fork.iter().map(|f| f.frame.clone()).collect();
            let mut c2 = child.walk();
            let cases: Vec<Node<'_>> = child.named_children(&mut c2).collect();
            for case in cases {
                if let Some(f) = &fork {
                    self.restore(f);
                }
                self.stmt(case);
                ends.extend(self.current());
            }
            if fork.is_some() {
                self.join_paths(ends);
            }
        }
        self.branch_depth -= 1;
    }

    /// `with a as x, b:`: each manager's `__enter__` is called (its result bound to the `as`
    /// target) and its `__exit__` when the block ends (`__aenter__`/`__aexit__` for `async
    /// with`); the `With` reference makes those edges.
    pub(super) fn with_statement(&mut self, node: Node<'_>) {
        let is_async = self.t(node).starts_with("async");
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        for child in children {
            if py_kind(child) != "with_clause" {
                self.stmt(child);
                continue;
            }
            let mut c2 = child.walk();
            let items: Vec<Node<'_>> = child.named_children(&mut c2).collect();
            for item in items {
                if let Some(value) = field!(item, "value") {
                    self.with_item(value, is_async);
                }
            }
        }
    }

    fn with_item(&mut self, value: Node<'_>, is_async: bool) {
        let (manager, target) = if py_kind(value) == "as_pattern" {
            let mut c = value.walk();
            let children: Vec<Node<'_>> = value.named_children(&mut c).collect();
            let target = children
                .iter()
                .find(|n| py_kind(**n) == "as_pattern_target")
                .and_then(|t| t.named_child(0));
            let manager = children
                .into_iter()
                .find(|n| py_kind(n) != "as_pattern_target");
            (manager, target)
        } else {
            (Some(value), None)
        };
        let Some(manager) = manager else { return };
        let e = self.expr(manager, true);
        let enter = if is_async { "__aenter__" } else { "__enter__" };
        let method = self.push(PExpr::Attr(e, enter.to_owned()));
        let entered = self.push(PExpr::Call(method));
        self.calls_built += 1;
        let kind = if is_async {
            PRefKind::AsyncWith
        } else {
            PRefKind::With
        };
        let written = self.t(manager).to_owned();
        self.add_ref(kind, e, line(manager), &written);
        if let Some(target) = target {
            self.store_targets(target, entered);
            self.bind_targets(target, Some(PBind::Assign(entered)));
        }
    }
}
