//! Patching the kept Go tables after declaration changes, instead of rebuilding them from all
//! files.
//!
//! The tables are the union of per-package contributions, except for three global parts: the
//! owner of a qname declared by two packages (possible only when a package path plus a name
//! spells another package's qname), the types of package-level vars inferred from initializers
//! (one pass over all files in path order), and `implements`/`impls`. A patch therefore removes
//! every entry of the changed files' packages, adds the packages' current files back
//! ([`GoIndex::add_files`]), restores the vars' types (only when they provably do not change)
//! and recomputes `implements`.
//!
//! It also tells which files may resolve differently: a file's edges depend on the tables only
//! through lookups by name (a package member, a field or method of a type), so when the
//! members and types of the patched packages changed in names `N` only, the files to
//! re-resolve are those that mention a name in `N`, among those that can see the packages.
//! Changes that alter lookups of every name through a type (its kind, underlying type,
//! embedded fields or interfaces) give [`Names::All`].
//!
//! A patch is refused (`None`: rebuild the tables) when a package appears or disappears, a
//! package's name or set of type names changes (other packages' resolved types depend on
//! them), a package-level var declaration changes, a qname may be declared by two packages, or
//! a var initializer anywhere mentions a changed name.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::facts::{FileFacts, LangFacts};
use super::go::{GExpr, GoFile};
use super::resolve_go::{GoIndex, Member, TypeInfo, TypeR};
use crate::model::Confidence;

/// Names whose lookups may give other results after a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Names {
    All,
    Some(BTreeSet<String>),
}

impl Names {
    fn add(&mut self, name: &str) {
        if let Names::Some(set) = self {
            set.insert(name.to_owned());
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Names::Some(set) if set.is_empty())
    }
}

/// The result of a successful patch.
#[derive(Debug)]
pub(crate) struct Patched {
    /// Packages whose entries were replaced.
    pub packages: BTreeSet<String>,
    /// Names whose lookups may have changed.
    pub names: Names,
    /// Files whose symbols may change: old and new owners of qnames and package homes.
    pub files: BTreeSet<String>,
    /// Types of the packages whose lookups of some name in `names` changed.
    pub types: BTreeSet<String>,
    /// `implements` and `impls` before the patch.
    pub old_implements: Implements,
    pub old_impls: HashMap<String, Vec<String>>,
}

type Implements = HashMap<String, Vec<(String, String, u32, Confidence)>>;

/// Patches `index` after the Go files in `old` changed (`old` maps each to its previous facts;
/// `facts` are the current ones). `None` if the tables must be rebuilt (the index may then be
/// half patched and must be dropped).
pub(crate) fn patch(
    index: &mut GoIndex,
    facts: &BTreeMap<String, FileFacts>,
    old: &BTreeMap<String, Option<FileFacts>>,
) -> Option<Patched> {
    let mut packages: BTreeSet<String> = BTreeSet::new();
    for (rel, before) in old {
        if let Some(g) = before.as_ref().and_then(go) {
            packages.insert(g.pkg_path.clone());
        }
        if let Some(g) = facts.get(rel).and_then(go) {
            packages.insert(g.pkg_path.clone());
        }
    }
    if packages.is_empty() {
        return Some(Patched {
            packages,
            names: Names::Some(BTreeSet::new()),
            files: BTreeSet::new(),
            types: BTreeSet::new(),
            old_implements: index.implements.clone(),
            old_impls: index.impls.clone(),
        });
    }
    // Current and previous files of the packages, in path order.
    let mut new_files: Vec<(&FileFacts, &GoFile)> = Vec::new();
    let mut old_files: Vec<(&str, &GoFile)> = Vec::new();
    for (rel, f) in facts {
        let Some(g) = go(f) else { continue };
        if !packages.contains(&g.pkg_path) {
            continue;
        }
        new_files.push((f, g));
        if !old.contains_key(rel) {
            old_files.push((rel, g));
        }
    }
    for (rel, before) in old {
        if let Some(g) = before.as_ref().and_then(go)
            && packages.contains(&g.pkg_path)
        {
            old_files.push((rel, g));
        }
    }
    old_files.sort_by(|a, b| a.0.cmp(b.0));
    for p in &packages {
        let was = old_files.iter().find(|(_, g)| &g.pkg_path == p);
        let is = new_files.iter().find(|(_, g)| &g.pkg_path == p);
        match (was, is) {
            // The package name is that of its first file.
            (Some((_, a)), Some((_, b))) if a.pkg_name == b.pkg_name => {}
            _ => return None,
        }
    }
    // Package-level var declarations must be the same (their types are inferred globally).
    for (rel, before) in old {
        let a = before.as_ref().and_then(go);
        let b = facts.get(rel).and_then(go);
        let same = match (a, b) {
            (Some(a), Some(b)) => {
                a.values.len() == b.values.len()
                    && a.values
                        .iter()
                        .zip(&b.values)
                        .all(|(x, y)| super::fast_path::same_value(a, x, b, y))
            }
            (Some(g), None) | (None, Some(g)) => g.values.is_empty(),
            (None, None) => true,
        };
        if !same {
            return None;
        }
    }
    let mut old_keys: BTreeSet<String> = BTreeSet::new();
    for (_, g) in &old_files {
        declared_keys(g, &mut old_keys);
    }
    let mut new_keys: BTreeSet<String> = BTreeSet::new();
    for (_, g) in &new_files {
        declared_keys(g, &mut new_keys);
    }
    // A qname that another package could also declare: ownership is decided across packages.
    for key in old_keys.iter().chain(&new_keys) {
        let own = packages.iter().any(|p| {
            key.len() > p.len() && key.starts_with(p.as_str()) && key.as_bytes()[p.len()] == b'.'
        });
        let shared = key.match_indices('.').any(|(i, _)| {
            let prefix = &key[..i];
            !packages.contains(prefix) && index.pkgs.contains_key(prefix)
        });
        if !own || shared {
            return None;
        }
    }

    // Remove the packages' entries, keeping them for the comparison.
    let mut old_members: HashMap<String, HashMap<String, Member>> = HashMap::new();
    let mut old_homes: HashMap<String, (String, u32)> = HashMap::new();
    for p in &packages {
        old_members.insert(p.clone(), index.pkgs.remove(p).unwrap_or_default());
        index.pkg_names.remove(p);
        if let Some(home) = index.pkg_home.remove(p) {
            old_homes.insert(p.clone(), home);
        }
    }
    let mut old_types: HashMap<String, TypeInfo> = HashMap::new();
    let mut old_owners: HashMap<String, String> = HashMap::new();
    let mut old_vars: HashMap<String, TypeR> = HashMap::new();
    for key in &old_keys {
        if let Some(t) = index.types.remove(key) {
            old_types.insert(key.clone(), t);
        }
        if let Some(o) = index.owners.remove(key) {
            old_owners.insert(key.clone(), o);
        }
        if let Some(v) = index.var_types.remove(key) {
            old_vars.insert(key.clone(), v);
        }
    }
    for key in &new_keys {
        if index.owners.contains_key(key) {
            return None;
        }
    }

    index.add_files(&new_files, false);
    // The var declarations are the same; their types change only if an initializer mentions a
    // changed name (checked below), so the previous ones are restored.
    for (key, ty) in old_vars {
        index.var_types.entry(key).or_insert(ty);
    }

    let mut names = Names::Some(BTreeSet::new());
    let mut files: BTreeSet<String> = BTreeSet::new();
    let mut types: BTreeSet<String> = BTreeSet::new();
    for p in &packages {
        let before = old_members.get(p);
        let after = index.pkgs.get(p);
        let type_names = |m: Option<&HashMap<String, Member>>| -> BTreeSet<String> {
            m.into_iter()
                .flatten()
                .filter(|(_, m)| matches!(m, Member::Type { .. }))
                .map(|(n, _)| n.clone())
                .collect()
        };
        if type_names(before) != type_names(after) {
            return None;
        }
        let empty = HashMap::new();
        let before = before.unwrap_or(&empty);
        let after = after.unwrap_or(&empty);
        for (name, m) in before {
            if !after.get(name).is_some_and(|n| same_member(m, n)) {
                names.add(name);
            }
        }
        for name in after.keys() {
            if !before.contains_key(name) {
                names.add(name);
            }
        }
        let home = index.pkg_home.get(p);
        if old_homes.get(p) != home {
            files.extend(old_homes.get(p).map(|h| h.0.clone()));
            files.extend(home.map(|h| h.0.clone()));
        }
    }
    for key in old_keys.iter().chain(&new_keys) {
        let before = old_owners.get(key);
        let after = index.owners.get(key);
        if before != after {
            files.extend(before.cloned());
            files.extend(after.cloned());
        }
        if let Some(a) = old_types.get(key) {
            match index.types.get(key) {
                Some(b) => {
                    if compare_types(a, b, &mut names) {
                        types.insert(key.clone());
                    }
                }
                None => names = Names::All,
            }
        } else if index.types.contains_key(key) {
            names = Names::All;
        }
    }
    if !names.is_empty() && !var_types_kept(index, facts, &packages, &names) {
        return None;
    }
    let started = std::time::Instant::now();
    let old_implements = std::mem::take(&mut index.implements);
    let old_impls = std::mem::take(&mut index.impls);
    super::resolve_go_impl::compute_implements(index);
    tracing::debug!(
        index.implements_ms = started.elapsed().as_millis() as u64,
        "patch: implements"
    );
    Some(Patched {
        packages,
        names,
        files,
        types,
        old_implements,
        old_impls,
    })
}

fn go(f: &FileFacts) -> Option<&GoFile> {
    match &f.lang {
        LangFacts::Go(g) => Some(g),
        LangFacts::Python(_) => None,
    }
}

/// Every qname a file declares (types, their fields and interface methods, functions,
/// methods, consts and vars).
fn declared_keys(g: &GoFile, out: &mut BTreeSet<String>) {
    let pkg = &g.pkg_path;
    for t in &g.types {
        let q = format!("{pkg}.{}", t.name);
        for f in &t.fields {
            out.insert(format!("{q}.{}", f.name));
        }
        for m in &t.methods {
            out.insert(format!("{q}.{}", m.name));
        }
        out.insert(q);
    }
    for f in &g.funcs {
        out.insert(match &f.recv {
            Some(r) => format!("{pkg}.{r}.{}", f.name),
            None => format!("{pkg}.{}", f.name),
        });
    }
    for v in &g.values {
        out.insert(format!("{pkg}.{}", v.name));
    }
}

/// Whether two members resolve the same for every lookup.
fn same_member(a: &Member, b: &Member) -> bool {
    match (a, b) {
        (
            Member::Func {
                qname: q1,
                results: r1,
            },
            Member::Func {
                qname: q2,
                results: r2,
            },
        ) => q1 == q2 && r1 == r2,
        (Member::Type { qname: q1 }, Member::Type { qname: q2 })
        | (Member::Var { qname: q1 }, Member::Var { qname: q2 }) => q1 == q2,
        _ => false,
    }
}

/// Adds to `names` the field and method names whose lookups on `a` and `b` differ; any
/// difference that changes lookups of every name (kind, underlying or aliased type, embedded
/// fields or interfaces, fields appearing or vanishing) gives [`Names::All`]. Method
/// parameters, files and lines are not read by lookups (only by `implements`).
fn compare_types(a: &TypeInfo, b: &TypeInfo, names: &mut Names) -> bool {
    let embedded = |t: &TypeInfo| -> Vec<TypeR> {
        t.fields
            .iter()
            .filter(|f| f.2)
            .map(|f| f.1.clone())
            .collect()
    };
    if a.kind != b.kind
        || a.alias_of != b.alias_of
        || a.underlying != b.underlying
        || a.constraint != b.constraint
        || a.embeds != b.embeds
        || a.fields.is_empty() != b.fields.is_empty()
        || embedded(a) != embedded(b)
    {
        *names = Names::All;
        return true;
    }
    let before = names.clone();
    let first_fields = |t: &TypeInfo| -> HashMap<String, TypeR> {
        let mut out = HashMap::new();
        for (n, ty, _) in &t.fields {
            out.entry(n.clone()).or_insert_with(|| ty.clone());
        }
        out
    };
    let (fa, fb) = (first_fields(a), first_fields(b));
    for (n, ty) in &fa {
        if fb.get(n) != Some(ty) {
            names.add(n);
        }
    }
    for n in fb.keys() {
        if !fa.contains_key(n) {
            names.add(n);
        }
    }
    for (n, m) in &a.methods {
        match b.methods.get(n) {
            Some(o) if o.qname == m.qname && o.results == m.results => {}
            _ => names.add(n),
        }
    }
    for n in b.methods.keys() {
        if !a.methods.contains_key(n) {
            names.add(n);
        }
    }
    *names != before
}

/// Whether the inferred types of package-level vars stay as they are: every var without a
/// declared type whose initializer can see the patched packages and mentions a changed name
/// still evaluates to its recorded type.
fn var_types_kept(
    index: &GoIndex,
    facts: &BTreeMap<String, FileFacts>,
    packages: &BTreeSet<String>,
    names: &Names,
) -> bool {
    let Names::Some(set) = names else {
        return false;
    };
    for rel in importers(facts, packages) {
        let Some(g) = facts.get(&rel).and_then(go) else {
            continue;
        };
        for v in &g.values {
            let Some((body, _, _)) = v.init else { continue };
            if v.ty.is_some()
                || !g
                    .bodies
                    .get(body)
                    .is_some_and(|b| b.exprs.iter().any(|e| mentions(e, set)))
            {
                continue;
            }
            let q = format!("{}.{}", g.pkg_path, v.name);
            let before = index.var_types.get(&q).cloned().unwrap_or(TypeR::Unknown);
            if index.infer_var_type(g, v) != before {
                return false;
            }
        }
    }
    true
}

fn mentions(e: &GExpr, set: &BTreeSet<String>) -> bool {
    match e {
        GExpr::Free(n) | GExpr::Selector(_, n) => set.contains(n.as_str()),
        _ => false,
    }
}

/// Files of the patched packages' importers, transitively (and the packages' own files): the
/// files whose resolution can see the packages' declarations.
pub(crate) fn importers(
    facts: &BTreeMap<String, FileFacts>,
    packages: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut readers: HashMap<&str, Vec<(&String, &GoFile)>> = HashMap::new();
    for (rel, f) in facts {
        if let LangFacts::Go(g) = &f.lang {
            readers
                .entry(g.pkg_path.as_str())
                .or_default()
                .push((rel, g));
            for imp in &g.imports {
                readers.entry(imp.path.as_str()).or_default().push((rel, g));
            }
        }
    }
    let mut out: BTreeSet<String> = BTreeSet::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut queue: Vec<&str> = packages.iter().map(String::as_str).collect();
    while let Some(p) = queue.pop() {
        if !seen.insert(p) {
            continue;
        }
        for (rel, g) in readers.get(p).into_iter().flatten() {
            // A test file's declarations are not visible to importers of its package.
            if out.insert((*rel).clone()) && !rel.ends_with("_test.go") {
                queue.push(g.pkg_path.as_str());
            }
        }
    }
    out
}

/// The Go files to re-resolve after a successful patch `p`, besides the changed files and
/// `p.files`: the files whose `implements` edges changed; among the files that can see the
/// patched packages, those with a selector `x.n` (`n` a changed name) where `x` is one of the
/// packages or has a type whose lookups changed (or reaches one by embedding or aliasing), or
/// a free identifier with a changed name resolved in the packages; anywhere, those with a
/// selector resolving to an interface method whose implementations changed (`dynamic`
/// edges).
///
/// Each edge is a chain of lookups by name; a chain that gives another result has a first
/// lookup that does, whose operand is unchanged, so evaluating the operands against the new
/// tables finds every file whose edges can change.
pub(crate) fn dependents(
    index: &GoIndex,
    facts: &BTreeMap<String, FileFacts>,
    p: &Patched,
    threads: usize,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    for (file, list) in &p.old_implements {
        if index.implements.get(file) != Some(list) {
            out.insert(file.clone());
        }
    }
    for file in index.implements.keys() {
        if !p.old_implements.contains_key(file) {
            out.insert(file.clone());
        }
    }
    let methods: HashSet<&str> = p
        .old_impls
        .keys()
        .chain(index.impls.keys())
        .filter(|m| p.old_impls.get(*m) != index.impls.get(*m))
        .map(String::as_str)
        .collect();
    let method_names: BTreeSet<String> = methods
        .iter()
        .filter_map(|m| m.rsplit('.').next())
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    let visible = if p.names.is_empty() {
        BTreeSet::new()
    } else {
        importers(facts, &p.packages)
    };
    let all_names: BTreeSet<String> = match &p.names {
        Names::Some(set) => set.iter().chain(&method_names).cloned().collect(),
        Names::All => method_names.clone(),
    };
    let none = BTreeSet::new();
    let changed = match &p.names {
        Names::Some(set) => set,
        Names::All => &none,
    };
    let everywhere = Wanted::new(&method_names);
    let visible_names = Wanted::new(&all_names);
    let files: Vec<(&String, &GoFile)> = facts
        .iter()
        .filter_map(|(rel, f)| go(f).map(|g| (rel, g)))
        .collect();
    let hits = super::parallel::par_map(
        &files,
        threads,
        |&(rel, g)| {
            let sees = visible.contains(rel);
            if sees && p.names == Names::All {
                return true;
            }
            let wanted = if sees { &visible_names } else { &everywhere };
            if wanted.names.is_empty()
                || !g
                    .bodies
                    .iter()
                    .any(|b| b.exprs.iter().any(|e| wanted.mentioned(e)))
            {
                return false;
            }
            // Free identifiers resolve in the file's package and dot-imported ones.
            let resolves_here = p.packages.contains(&g.pkg_path)
                || g.imports
                    .iter()
                    .any(|i| i.alias.as_deref() == Some(".") && p.packages.contains(&i.path));
            let free_hit = sees
                && resolves_here
                && g.bodies.iter().any(|b| {
                    b.exprs
                        .iter()
                        .any(|e| matches!(e, GExpr::Free(n) if changed.contains(n.as_str())))
                });
            let mut reaches: HashMap<String, bool> = HashMap::new();
            free_hit
                || index.probe_selectors(g, wanted.names, &mut |probe| {
                    if probe.method.as_deref().is_some_and(|m| methods.contains(m)) {
                        return true;
                    }
                    if !sees || !changed.contains(probe.name) {
                        return false;
                    }
                    probe.pkg.as_ref().is_some_and(|x| p.packages.contains(x))
                        || probe
                            .ty
                            .as_ref()
                            .is_some_and(|t| reaches_changed(index, t, &p.types, &mut reaches, 0))
                })
        },
        |_| {},
    );
    for ((rel, _), hit) in files.iter().zip(hits) {
        if hit {
            out.insert((*rel).clone());
        }
    }
    out
}

/// A set of names, with their lengths as a cheap first test (most identifiers compared are
/// not wanted, and their lengths are stored inline).
struct Wanted<'a> {
    names: &'a BTreeSet<String>,
    lengths: u128,
}

impl<'a> Wanted<'a> {
    fn new(names: &'a BTreeSet<String>) -> Self {
        let lengths = names.iter().fold(0u128, |m, n| {
            m | 1u128.checked_shl(n.len() as u32).unwrap_or(0)
        });
        Wanted { names, lengths }
    }

    fn mentioned(&self, e: &GExpr) -> bool {
        match e {
            GExpr::Free(n) | GExpr::Selector(_, n) => {
                let bit = 1u128.checked_shl(n.len() as u32).unwrap_or(0);
                (bit == 0 || self.lengths & bit != 0) && self.names.contains(n.as_str())
            }
            _ => false,
        }
    }
}

/// Whether lookups on type `q` can pass through one of `changed` (itself, or a type it
/// aliases, embeds, or is defined as).
fn reaches_changed(
    index: &GoIndex,
    q: &str,
    changed: &BTreeSet<String>,
    memo: &mut HashMap<String, bool>,
    depth: u32,
) -> bool {
    if changed.contains(q) {
        return true;
    }
    if let Some(&known) = memo.get(q) {
        return known;
    }
    if depth > 16 {
        // Too deep to tell: assume it does.
        return true;
    }
    // While exploring, a cycle back to `q` counts as reaching (conservatively).
    memo.insert(q.to_owned(), true);
    let Some(info) = index.types.get(q) else {
        return false;
    };
    let named = |t: &TypeR| -> Option<String> {
        let mut t = t;
        while let TypeR::Pointer(inner) = t {
            t = inner;
        }
        match t {
            TypeR::Named(n) => Some(n.clone()),
            _ => None,
        }
    };
    let next: Vec<String> = info
        .alias_of
        .iter()
        .chain(std::iter::once(&info.underlying))
        .chain(&info.embeds)
        .chain(info.fields.iter().filter(|f| f.2).map(|f| &f.1))
        .filter_map(named)
        .collect();
    let result = next
        .iter()
        .any(|n| reaches_changed(index, n, changed, memo, depth + 1));
    memo.insert(q.to_owned(), result);
    result
}
