//! Go `implements`: concrete types whose method set (value and pointer receivers, promoted
//! methods included) covers an interface's method set, across packages.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::GoTypeKind;
use super::tables::{GoIndex, MethodInfo, TypeR};
use crate::model::Confidence;

type Sig = (Vec<String>, Vec<String>, bool);

/// Method sets: name → (declaring method qname, signature), borrowed from the tables.
type MethodSet<'a> = HashMap<&'a str, (&'a str, &'a Sig)>;

/// Computes `index.implements` and `index.impls`.
pub(crate) fn compute_implements(index: &mut GoIndex) {
    let (implements, impls) = implements_of(index);
    index.implements = implements;
    index.impls = impls;
}

type Implements = HashMap<String, Vec<(String, String, u32, Confidence)>>;

fn implements_of(index: &GoIndex) -> (Implements, HashMap<String, Vec<String>>) {
    // The method set of the predeclared `error`.
    let error_sig: Sig = (Vec::new(), vec!["string".into()], false);
    let error_sig = &error_sig;
    let mut iface_sets: Vec<(&String, MethodSet<'_>)> = Vec::new();
    let mut concrete: Vec<(&String, MethodSet<'_>)> = Vec::new();
    let mut qnames: Vec<&String> = index.types.keys().collect();
    qnames.sort();
    for q in qnames {
        let info = &index.types[q];
        if info.alias_of.is_some() {
            continue;
        }
        if info.kind == GoTypeKind::Interface {
            if info.constraint {
                continue;
            }
            let mut set = MethodSet::default();
            if iface_methods(index, error_sig, q, &mut set, &mut HashSet::default())
                && !set.is_empty()
            {
                iface_sets.push((q, set));
            }
        } else {
            let mut set = MethodSet::default();
            concrete_methods(index, error_sig, q, &mut set, 0, &mut HashSet::default());
            if !set.is_empty() {
                concrete.push((q, set));
            }
        }
    }
    let mut by_method: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, (_, set)) in concrete.iter().enumerate() {
        for name in set.keys() {
            by_method.entry(name).or_default().push(i);
        }
    }
    let mut implements: Implements = HashMap::default();
    let mut impls: HashMap<String, Vec<String>> = HashMap::default();
    for (iface, iset) in &iface_sets {
        let Some(rarest) = iset
            .keys()
            .min_by_key(|name| by_method.get(*name).map_or(0, Vec::len))
        else {
            continue;
        };
        let Some(candidates) = by_method.get(rarest) else {
            continue;
        };
        for &ci in candidates {
            let (ty, cset) = &concrete[ci];
            let mut wildcard = false;
            let covers = iset.iter().all(|(name, (_, isig))| match cset.get(name) {
                Some((_, csig)) => sig_compatible(isig, csig, &mut wildcard),
                None => false,
            });
            if !covers {
                continue;
            }
            let info = &index.types[*ty];
            let confidence = if wildcard {
                Confidence::Inferred
            } else {
                Confidence::Exact
            };
            implements.entry(info.file.clone()).or_default().push((
                (*ty).clone(),
                (*iface).clone(),
                info.line,
                confidence,
            ));
            for (name, (imethod, _)) in iset {
                if let Some((cmethod, _)) = cset.get(name) {
                    impls
                        .entry((*imethod).to_owned())
                        .or_default()
                        .push((*cmethod).to_owned());
                }
            }
        }
    }
    for targets in impls.values_mut() {
        targets.sort();
        targets.dedup();
    }
    (implements, impls)
}

/// Collects an interface's full method set; `false` if part of it is unknown (external embeds).
fn iface_methods<'a>(
    index: &'a GoIndex,
    error_sig: &'a Sig,
    q: &'a str,
    set: &mut MethodSet<'a>,
    seen: &mut HashSet<&'a str>,
) -> bool {
    if !seen.insert(q) {
        return true;
    }
    let Some(info) = index.type_info(q) else {
        return false;
    };
    if info.kind != GoTypeKind::Interface || info.constraint {
        return false;
    }
    for (name, m) in &info.methods {
        set.entry(name).or_insert_with(|| entry(m));
    }
    for embed in &info.embeds {
        match embed {
            TypeR::Named(e) => {
                if !iface_methods(index, error_sig, e, set, seen) {
                    return false;
                }
            }
            TypeR::Builtin(b) if b == "error" => {
                set.entry("Error").or_insert(("", error_sig));
            }
            _ => return false,
        }
    }
    true
}

fn entry(m: &MethodInfo) -> (&str, &Sig) {
    (&m.qname, &m.sig)
}

/// Collects a concrete type's method set: declared methods, then promoted ones (shallower wins).
fn concrete_methods<'a>(
    index: &'a GoIndex,
    error_sig: &'a Sig,
    q: &'a str,
    set: &mut MethodSet<'a>,
    depth: u32,
    seen: &mut HashSet<&'a str>,
) {
    if depth > 5 || !seen.insert(q) {
        return;
    }
    let Some(info) = index.type_info(q) else {
        return;
    };
    if info.kind == GoTypeKind::Interface {
        let mut iset = MethodSet::default();
        iface_methods(index, error_sig, q, &mut iset, &mut HashSet::default());
        for (k, v) in iset {
            set.entry(k).or_insert(v);
        }
        return;
    }
    for (name, m) in &info.methods {
        set.entry(name).or_insert_with(|| entry(m));
    }
    for (_, fty, embedded) in &info.fields {
        if !*embedded {
            continue;
        }
        let inner = match fty {
            TypeR::Pointer(inner) => inner.as_ref(),
            other => other,
        };
        if let TypeR::Named(e) = inner {
            let mut sub = MethodSet::default();
            concrete_methods(index, error_sig, e, &mut sub, depth + 1, seen);
            for (k, v) in sub {
                set.entry(k).or_insert(v);
            }
        }
    }
}

fn sig_compatible(iface: &Sig, conc: &Sig, wildcard: &mut bool) -> bool {
    if iface.0.len() != conc.0.len() || iface.1.len() != conc.1.len() || iface.2 != conc.2 {
        return false;
    }
    let pairs = iface
        .0
        .iter()
        .zip(&conc.0)
        .chain(iface.1.iter().zip(&conc.1));
    for (a, b) in pairs {
        if a == b {
            if a.contains('?') {
                *wildcard = true;
            }
            continue;
        }
        if a.contains('?') || b.contains('?') {
            *wildcard = true;
            continue;
        }
        return false;
    }
    true
}
