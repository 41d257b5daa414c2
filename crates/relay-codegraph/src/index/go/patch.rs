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
//! It also tells what changed, for [`super::dependents`]: a file's edges depend on the
//! tables only through lookups by name (a package member, a field or method of a type), so the
//! patch reports the names `N` whose lookups on the packages' members and types may differ and
//! the types concerned. Changes that alter lookups of every name through a type (its kind,
//! underlying type, embedded fields or interfaces) give [`Names::All`].
//!
//! A patch is refused (`None`: rebuild the tables) when a package appears or disappears, a
//! package's name or set of type names changes (other packages' resolved types depend on
//! them), a package-level var declaration of a changed file changes, a qname may be declared
//! by two packages, or an inferred var type (initializer mentioning a name in `N`) changes.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use super::build::VarTypes;
use super::facts::{GExpr, GoFile, go, importers};
use super::tables::{GoIndex, Implementation, Member, PackageHome, Target, TypeInfo, TypeR};
use crate::index::facts::FileFacts;

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
    pub old_impls: HashMap<String, Vec<Target>>,
    /// Files whose dynamic call sites reach other values after the patch.
    pub flow_files: Vec<String>,
}

type Implements = HashMap<String, Vec<Implementation>>;

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
            flow_files: Vec::new(),
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
                        .all(|(x, y)| super::same_decls::same_value(a, x, b, y))
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
    let mut old_members: HashMap<String, HashMap<String, Member>> = HashMap::default();
    let mut old_homes: HashMap<String, PackageHome> = HashMap::default();
    for p in &packages {
        old_members.insert(p.clone(), index.pkgs.remove(p).unwrap_or_default());
        index.pkg_names.remove(p);
        if let Some(home) = index.pkg_home.remove(p) {
            old_homes.insert(p.clone(), home);
        }
    }
    let mut old_types: HashMap<String, TypeInfo> = HashMap::default();
    let mut old_owners: HashMap<String, String> = HashMap::default();
    let mut old_vars: HashMap<String, TypeR> = HashMap::default();
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

    index.add_files(&new_files, VarTypes::Restored);
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
        let empty = HashMap::default();
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
            files.extend(old_homes.get(p).map(|old_home| old_home.file.clone()));
            files.extend(home.map(|home| home.file.clone()));
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
    super::implements::compute_implements(index);
    tracing::debug!(
        index.implements_ms = started.elapsed().as_millis() as u64,
        "patch: implements"
    );
    let flow_files = update_flow(index, facts);
    Some(Patched {
        packages,
        names,
        files,
        types,
        old_implements,
        old_impls,
        flow_files,
    })
}

/// Solves the value flow again over all Go files; the files whose dynamic call sites now reach
/// other values.
pub(crate) fn update_flow(index: &mut GoIndex, facts: &BTreeMap<String, FileFacts>) -> Vec<String> {
    let files: Vec<(&FileFacts, &GoFile)> = facts
        .values()
        .filter_map(|f| go(f).map(|g| (f, g)))
        .collect();
    let new = super::flow::compute_flow(index, &files);
    let changed = index.flow.changed_files(&new);
    index.flow = new;
    changed
}

/// Every qname a file declares (types, their fields and interface methods, functions,
/// methods, consts and vars).
fn declared_keys(go_file: &GoFile, out: &mut BTreeSet<String>) {
    let pkg = &go_file.pkg_path;
    for decl in &go_file.types {
        let q = format!("{pkg}.{}", decl.name);
        for f in &decl.fields {
            out.insert(format!("{q}.{}", f.name));
        }
        for m in &decl.methods {
            out.insert(format!("{q}.{}", m.name));
        }
        out.insert(q);
    }
    for f in &go_file.funcs {
        out.insert(match &f.recv {
            Some(r) => format!("{pkg}.{r}.{}", f.name),
            None => format!("{pkg}.{}", f.name),
        });
    }
    for v in &go_file.values {
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
            .filter(|field| field.embedded)
            .map(|field| field.ty.clone())
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
        let mut out = HashMap::default();
        for field in &t.fields {
            out.entry(field.name.clone())
                .or_insert_with(|| field.ty.clone());
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

fn mentions(expr: &GExpr, set: &BTreeSet<String>) -> bool {
    match expr {
        GExpr::Free(n) | GExpr::Selector(_, n) => set.contains(n.as_str()),
        _ => false,
    }
}
