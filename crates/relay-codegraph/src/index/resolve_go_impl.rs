//! Go `implements`: concrete types whose method set (value and pointer receivers, promoted
//! methods included) covers an interface's method set, across packages.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::go::GoTypeKind;
use super::resolve_go::{GoIndex, MethodInfo, TypeR};
use crate::model::Confidence;

type Sig = (Vec<String>, Vec<String>, bool);

/// Method sets: name → (declaring method qname, signature).
type MethodSet = HashMap<String, (String, Sig)>;

/// Computes `index.implements` and `index.impls`.
pub(crate) fn compute_implements(index: &mut GoIndex) {
    let mut iface_sets: Vec<(String, MethodSet)> = Vec::new();
    let mut concrete: Vec<(String, MethodSet)> = Vec::new();
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
            if iface_methods(index, q, &mut set, &mut HashSet::default()) && !set.is_empty() {
                iface_sets.push((q.clone(), set));
            }
        } else {
            let mut set = MethodSet::default();
            concrete_methods(index, q, &mut set, 0, &mut HashSet::default());
            if !set.is_empty() {
                concrete.push((q.clone(), set));
            }
        }
    }
    let mut by_method: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, (_, set)) in concrete.iter().enumerate() {
        for name in set.keys() {
            by_method.entry(name.as_str()).or_default().push(i);
        }
    }
    let mut implements: HashMap<String, Vec<(String, String, u32, Confidence)>> =
        HashMap::default();
    let mut impls: HashMap<String, Vec<String>> = HashMap::default();
    for (iface, iset) in &iface_sets {
        let Some(rarest) = iset
            .keys()
            .min_by_key(|name| by_method.get(name.as_str()).map_or(0, Vec::len))
        else {
            continue;
        };
        let Some(candidates) = by_method.get(rarest.as_str()) else {
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
            let info = &index.types[ty];
            let confidence = if wildcard {
                Confidence::Inferred
            } else {
                Confidence::Exact
            };
            implements.entry(info.file.clone()).or_default().push((
                ty.clone(),
                iface.clone(),
                info.line,
                confidence,
            ));
            for (name, (imethod, _)) in iset {
                if let Some((cmethod, _)) = cset.get(name) {
                    impls
                        .entry(imethod.clone())
                        .or_default()
                        .push(cmethod.clone());
                }
            }
        }
    }
    for targets in impls.values_mut() {
        targets.sort();
        targets.dedup();
    }
    index.implements = implements;
    index.impls = impls;
}

/// Collects an interface's full method set; `false` if part of it is unknown (external embeds).
fn iface_methods(
    index: &GoIndex,
    q: &str,
    set: &mut MethodSet,
    seen: &mut HashSet<String>,
) -> bool {
    if !seen.insert(q.to_owned()) {
        return true;
    }
    let Some(info) = index.type_info(q) else {
        return false;
    };
    if info.kind != GoTypeKind::Interface || info.constraint {
        return false;
    }
    for (name, m) in &info.methods {
        set.entry(name.clone()).or_insert_with(|| entry(m));
    }
    for embed in &info.embeds {
        match embed {
            TypeR::Named(e) => {
                if !iface_methods(index, e, set, seen) {
                    return false;
                }
            }
            TypeR::Builtin(b) if b == "error" => {
                set.entry("Error".into())
                    .or_insert_with(|| (String::new(), (Vec::new(), vec!["string".into()], false)));
            }
            _ => return false,
        }
    }
    true
}

fn entry(m: &MethodInfo) -> (String, Sig) {
    (m.qname.clone(), m.sig.clone())
}

/// Collects a concrete type's method set: declared methods, then promoted ones (shallower wins).
fn concrete_methods(
    index: &GoIndex,
    q: &str,
    set: &mut MethodSet,
    depth: u32,
    seen: &mut HashSet<String>,
) {
    if depth > 5 || !seen.insert(q.to_owned()) {
        return;
    }
    let Some(info) = index.type_info(q) else {
        return;
    };
    if info.kind == GoTypeKind::Interface {
        let mut iset = MethodSet::default();
        iface_methods(index, q, &mut iset, &mut HashSet::default());
        for (k, v) in iset {
            set.entry(k).or_insert(v);
        }
        return;
    }
    for (name, m) in &info.methods {
        set.entry(name.clone()).or_insert_with(|| entry(m));
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
            concrete_methods(index, e, &mut sub, depth + 1, seen);
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
