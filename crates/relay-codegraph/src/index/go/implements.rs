//! Go `implements`: concrete types whose method set (value and pointer receivers, promoted
//! methods included) covers an interface's method set, across packages.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::facts::GoTypeKind;
use super::tables::{
    ERROR_DISPATCH, GoIndex, Implementation, MethodInfo, SignatureKeys, Target, TypeR,
};
use crate::model::Confidence;

/// Levels of embedded fields whose methods a concrete type's method set takes in (the same
/// bound as a member lookup's, [`super::tables`]' `MAX_EMBEDDED_LOOKUP_DEPTH`): deeper promotion
/// is rare, and an embedding cycle through pointers must end.
const MAX_PROMOTION_DEPTH: u32 = 6;

/// One entry of a method set, borrowed from the tables.
#[derive(Debug, Clone, Copy)]
struct SetMethod<'a> {
    /// The declaring method's qname (empty for the predeclared `error`'s `Error`).
    qname: &'a str,
    signature: &'a SignatureKeys,
    /// Declared by an interface (promoted from an embedded interface into a struct): never a
    /// dispatch target.
    abstract_method: bool,
}

/// Method sets: method name → its entry.
type MethodSet<'a> = HashMap<&'a str, SetMethod<'a>>;

/// Computes `index.implements` and `index.impls`.
pub(crate) fn compute_implements(index: &mut GoIndex) {
    let (implements, impls) = implements_of(index);
    index.implements = implements;
    index.impls = impls;
}

type Implements = HashMap<String, Vec<Implementation>>;

fn implements_of(index: &GoIndex) -> (Implements, HashMap<String, Vec<Target>>) {
    // The method set of the predeclared `error`.
    let error_signature = SignatureKeys {
        params: Vec::new(),
        results: vec!["string".into()],
        variadic: false,
    };
    let error_signature = &error_signature;
    let mut interfaces: Vec<(&String, MethodSet<'_>)> = Vec::new();
    let mut concrete: Vec<(&String, MethodSet<'_>)> = Vec::new();
    let mut qnames: Vec<&String> = index.types.keys().collect();
    qnames.sort();
    for type_qname in qnames {
        let info = &index.types[type_qname];
        if info.alias_of.is_some() {
            continue;
        }
        if info.kind == GoTypeKind::Interface {
            if info.constraint {
                continue;
            }
            let mut set = MethodSet::default();
            if iface_methods(
                index,
                error_signature,
                type_qname,
                &mut set,
                &mut HashSet::default(),
            ) && !set.is_empty()
            {
                interfaces.push((type_qname, set));
            }
        } else {
            let mut set = MethodSet::default();
            concrete_methods(
                index,
                error_signature,
                type_qname,
                &mut set,
                0,
                &mut HashSet::default(),
            );
            if !set.is_empty() {
                concrete.push((type_qname, set));
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
    let mut impls: HashMap<String, Vec<Target>> = HashMap::default();
    for (iface, interface_set) in &interfaces {
        let Some(rarest) = interface_set
            .keys()
            .min_by_key(|name| by_method.get(*name).map_or(0, Vec::len))
        else {
            continue;
        };
        let Some(candidates) = by_method.get(rarest) else {
            continue;
        };
        for &candidate in candidates {
            let (ty, concrete_set) = &concrete[candidate];
            let mut wildcard = false;
            let covers = interface_set
                .iter()
                .all(|(name, wanted)| match concrete_set.get(name) {
                    Some(offered) => {
                        signatures_compatible(wanted.signature, offered.signature, &mut wildcard)
                    }
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
            implements
                .entry(info.file.clone())
                .or_default()
                .push(Implementation {
                    ty: (*ty).clone(),
                    interface: (*iface).clone(),
                    line: info.line,
                    confidence,
                });
            for name in interface_set.keys() {
                if let Some(concrete_method) = concrete_set.get(name)
                    && !concrete_method.abstract_method
                {
                    impls
                        .entry(format!("{iface}.{name}"))
                        .or_default()
                        .push(Target {
                            ty: (*ty).clone(),
                            method: concrete_method.qname.to_owned(),
                        });
                }
            }
        }
    }
    // The predeclared `error`: every concrete `Error() string`.
    for (ty, concrete_set) in &concrete {
        if let Some(method) = concrete_set.get("Error")
            && !method.abstract_method
            && signatures_compatible(error_signature, method.signature, &mut false)
        {
            impls
                .entry(ERROR_DISPATCH.to_owned())
                .or_default()
                .push(Target {
                    ty: (*ty).clone(),
                    method: method.qname.to_owned(),
                });
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
    error_signature: &'a SignatureKeys,
    type_qname: &'a str,
    set: &mut MethodSet<'a>,
    seen: &mut HashSet<&'a str>,
) -> bool {
    if !seen.insert(type_qname) {
        return true;
    }
    let Some(info) = index.type_info(type_qname) else {
        return false;
    };
    if info.kind != GoTypeKind::Interface || info.constraint {
        return false;
    }
    for (name, method) in &info.methods {
        set.entry(name).or_insert_with(|| entry(method, true));
    }
    for embed in &info.embeds {
        match embed {
            TypeR::Named(embedded) => {
                if !iface_methods(index, error_signature, embedded, set, seen) {
                    return false;
                }
            }
            TypeR::Builtin(builtin) if builtin == "error" => {
                set.entry("Error").or_insert(SetMethod {
                    qname: "",
                    signature: error_signature,
                    abstract_method: true,
                });
            }
            _ => return false,
        }
    }
    true
}

fn entry(method: &MethodInfo, abstract_method: bool) -> SetMethod<'_> {
    SetMethod {
        qname: &method.qname,
        signature: &method.sig,
        abstract_method,
    }
}

/// Collects a concrete type's method set: declared methods, then promoted ones (shallower wins).
fn concrete_methods<'a>(
    index: &'a GoIndex,
    error_signature: &'a SignatureKeys,
    type_qname: &'a str,
    set: &mut MethodSet<'a>,
    depth: u32,
    seen: &mut HashSet<&'a str>,
) {
    if depth >= MAX_PROMOTION_DEPTH || !seen.insert(type_qname) {
        return;
    }
    let Some(info) = index.type_info(type_qname) else {
        return;
    };
    if info.kind == GoTypeKind::Interface {
        let mut interface_set = MethodSet::default();
        iface_methods(
            index,
            error_signature,
            type_qname,
            &mut interface_set,
            &mut HashSet::default(),
        );
        for (method_name, set_method) in interface_set {
            set.entry(method_name).or_insert(set_method);
        }
        return;
    }
    for (name, method) in &info.methods {
        set.entry(name).or_insert_with(|| entry(method, false));
    }
    for field in &info.fields {
        if !field.embedded {
            continue;
        }
        let inner = match &field.ty {
            TypeR::Pointer(inner) => inner.as_ref(),
            other => other,
        };
        if let TypeR::Named(embedded) = inner {
            let mut promoted = MethodSet::default();
            concrete_methods(
                index,
                error_signature,
                embedded,
                &mut promoted,
                depth + 1,
                seen,
            );
            for (method_name, set_method) in promoted {
                set.entry(method_name).or_insert(set_method);
            }
        }
    }
}

/// Whether a concrete method's signature satisfies an interface method's; sets `wildcard` when
/// that rests on a type the tables do not know (`?`), which makes the edge `inferred`.
fn signatures_compatible(
    interface: &SignatureKeys,
    concrete: &SignatureKeys,
    wildcard: &mut bool,
) -> bool {
    if interface.params.len() != concrete.params.len()
        || interface.results.len() != concrete.results.len()
        || interface.variadic != concrete.variadic
    {
        return false;
    }
    let pairs = interface
        .params
        .iter()
        .zip(&concrete.params)
        .chain(interface.results.iter().zip(&concrete.results));
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
