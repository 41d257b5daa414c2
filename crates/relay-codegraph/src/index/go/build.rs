//! Building the Go tables from every file, in order: declare (packages, types, members,
//! owners), infer (package-level vars' types from their initializers), implements, flow.

use rustc_hash::FxHashMap as HashMap;

use super::eval::Eval;
use super::facts::{GoFile, GoSig};
use super::flow::compute_flow;
use super::implements::compute_implements;
use super::tables::{
    FieldInfo, FileCtx, GoIndex, Member, MethodInfo, PackageHome, SignatureKeys, TypeInfo, TypeR,
};
use crate::index::facts::FileFacts;

/// Rounds of var type inference over all files (a var initialized from another var declared
/// later in path order needs the second).
const VAR_INFERENCE_ROUNDS: usize = 2;

/// Whether [`GoIndex::add_files`] infers the types of package-level vars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarTypes {
    /// From their initializers (a full build).
    Infer,
    /// Left to the caller, who restores them (a patch).
    Restored,
}

/// The Go files among `files`, with their facts.
fn go_files<'a>(files: &[&'a FileFacts]) -> Vec<(&'a FileFacts, &'a GoFile)> {
    files
        .iter()
        .filter_map(|f| match &f.lang {
            crate::index::facts::LangFacts::Go(g) => Some((*f, g)),
            _ => None,
        })
        .collect()
}

impl GoIndex {
    /// Builds the tables from every Go file (sorted by path).
    pub(crate) fn build(files: &[&FileFacts]) -> GoIndex {
        let gos = go_files(files);
        let mut index = GoIndex::default();
        index.add_files(&gos, VarTypes::Infer);
        compute_implements(&mut index);
        index.flow = compute_flow(&index, &gos);
        index
    }

    /// Adds the entries of `gos` (sorted by path) to the tables: everything but `implements`
    /// and `impls`: declare (package names and homes, owners, members, types), then infer
    /// the vars' types. The incremental update adds whole packages this way after removing
    /// their old entries; it passes [`VarTypes::Restored`] and restores the vars' types itself
    /// (they are inferred in one pass over all files, in path order).
    pub(crate) fn add_files(&mut self, files: &[(&FileFacts, &GoFile)], vars: VarTypes) {
        let files = files.to_vec();
        let index = self;
        // Package names and homes.
        for (facts, go_file) in &files {
            index
                .pkg_names
                .entry(go_file.pkg_path.clone())
                .or_insert_with(|| go_file.pkg_name.clone());
            let is_test = facts.rel.ends_with("_test.go");
            let here = PackageHome {
                file: facts.rel.clone(),
                line: go_file.pkg_line,
            };
            let home = index
                .pkg_home
                .entry(go_file.pkg_path.clone())
                .or_insert_with(|| here.clone());
            if home.file.ends_with("_test.go") && !is_test {
                *home = here;
            }
        }
        // Prefer a non-test file with a package doc comment.
        for (facts, go_file) in &files {
            if go_file.pkg_doc.is_some() && !facts.rel.ends_with("_test.go") {
                let home = index.pkg_home.get_mut(&go_file.pkg_path);
                if let Some(home) = home {
                    let current_has_doc = files.iter().any(|(other, other_go)| {
                        other.rel == home.file && other_go.pkg_doc.is_some()
                    });
                    if !current_has_doc {
                        *home = PackageHome {
                            file: facts.rel.clone(),
                            line: go_file.pkg_line,
                        };
                    }
                }
            }
        }
        // Owners and members (types first so that function results can be resolved).
        for (facts, go_file) in &files {
            let members = index.pkgs.entry(go_file.pkg_path.clone()).or_default();
            for decl in &go_file.types {
                let decl_qname = format!("{}.{}", go_file.pkg_path, decl.name);
                members.entry(decl.name.clone()).or_insert(Member::Type {
                    qname: decl_qname.clone(),
                });
                index
                    .owners
                    .entry(decl_qname)
                    .or_insert_with(|| facts.rel.clone());
            }
        }
        let ctxs: Vec<FileCtx> = files
            .iter()
            .map(|(_, go_file)| index.file_ctx(go_file))
            .collect();
        for ((facts, go_file), ctx) in files.iter().zip(&ctxs) {
            for decl in &go_file.types {
                let decl_qname = format!("{}.{}", go_file.pkg_path, decl.name);
                if index.owners.get(&decl_qname) != Some(&facts.rel)
                    || index.types.contains_key(&decl_qname)
                {
                    continue;
                }
                let mut info = TypeInfo {
                    kind: decl.kind,
                    alias_of: None,
                    underlying: index.resolve_type(ctx, &decl.underlying),
                    fields: decl
                        .fields
                        .iter()
                        .map(|field| FieldInfo {
                            name: field.name.clone(),
                            ty: index.resolve_type(ctx, &field.ty),
                            embedded: field.embedded,
                        })
                        .collect(),
                    methods: HashMap::default(),
                    embeds: decl
                        .embeds
                        .iter()
                        .map(|e| index.resolve_type(ctx, e))
                        .collect(),
                    constraint: decl.constraint,
                    file: facts.rel.clone(),
                    line: decl.line,
                };
                if decl.alias {
                    info.alias_of = Some(info.underlying.clone());
                }
                for m in &decl.methods {
                    let method_qname = format!("{decl_qname}.{}", m.name);
                    info.methods
                        .insert(m.name.clone(), index.method_info(ctx, method_qname, &m.sig));
                }
                index.types.insert(decl_qname, info);
            }
        }
        for ((facts, go_file), ctx) in files.iter().zip(&ctxs) {
            for f in &go_file.funcs {
                match &f.recv {
                    None => {
                        let decl_qname = format!("{}.{}", go_file.pkg_path, f.name);
                        index
                            .owners
                            .entry(decl_qname.clone())
                            .or_insert_with(|| facts.rel.clone());
                        let results = f
                            .sig
                            .results
                            .iter()
                            .map(|r| index.resolve_type(ctx, r))
                            .collect();
                        index
                            .pkgs
                            .entry(go_file.pkg_path.clone())
                            .or_default()
                            .entry(f.name.clone())
                            .or_insert(Member::Func {
                                qname: decl_qname,
                                results,
                            });
                    }
                    Some(recv) => {
                        let type_qname = format!("{}.{recv}", go_file.pkg_path);
                        let decl_qname = format!("{type_qname}.{}", f.name);
                        index
                            .owners
                            .entry(decl_qname.clone())
                            .or_insert_with(|| facts.rel.clone());
                        let info = index.method_info(ctx, decl_qname, &f.sig);
                        if let Some(decl) = index.types.get_mut(&type_qname) {
                            decl.methods.entry(f.name.clone()).or_insert(info);
                        }
                    }
                }
            }
            for value in &go_file.values {
                let decl_qname = format!("{}.{}", go_file.pkg_path, value.name);
                index
                    .owners
                    .entry(decl_qname.clone())
                    .or_insert_with(|| facts.rel.clone());
                index
                    .pkgs
                    .entry(go_file.pkg_path.clone())
                    .or_default()
                    .entry(value.name.clone())
                    .or_insert(Member::Var {
                        qname: decl_qname.clone(),
                    });
                if let Some(ty) = &value.ty {
                    let r = index.resolve_type(ctx, ty);
                    index.var_types.entry(decl_qname).or_insert(r);
                }
            }
            for decl in &go_file.types {
                let type_qname = format!("{}.{}", go_file.pkg_path, decl.name);
                for f in &decl.fields {
                    index
                        .owners
                        .entry(format!("{type_qname}.{}", f.name))
                        .or_insert_with(|| facts.rel.clone());
                }
                for m in &decl.methods {
                    index
                        .owners
                        .entry(format!("{type_qname}.{}", m.name))
                        .or_insert_with(|| facts.rel.clone());
                }
            }
        }
        if vars == VarTypes::Infer {
            index.infer_var_types(&files, &ctxs);
        }
    }

    /// Infers the types of package-level vars declared without one from their initializers.
    fn infer_var_types(&mut self, files: &[(&FileFacts, &GoFile)], ctxs: &[FileCtx]) {
        let index = self;
        for _ in 0..VAR_INFERENCE_ROUNDS {
            for ((_, go_file), ctx) in files.iter().zip(ctxs) {
                for value in &go_file.values {
                    let decl_qname = format!("{}.{}", go_file.pkg_path, value.name);
                    if index.var_types.contains_key(&decl_qname) {
                        continue;
                    }
                    let Some((body, expr, idx)) = value.init else {
                        continue;
                    };
                    let Some(body) = go_file.bodies.get(body) else {
                        continue;
                    };
                    let mut eval = Eval::new(index, ctx, body);
                    let ty = eval.value_type(expr, idx);
                    if ty != TypeR::Unknown {
                        index.var_types.insert(decl_qname, ty);
                    }
                }
            }
        }
    }

    fn method_info(&self, ctx: &FileCtx, qname: String, sig: &GoSig) -> MethodInfo {
        let params: Vec<TypeR> = sig
            .params
            .iter()
            .map(|param| self.resolve_type(ctx, param))
            .collect();
        let results: Vec<TypeR> = sig
            .results
            .iter()
            .map(|param| self.resolve_type(ctx, param))
            .collect();
        MethodInfo {
            qname,
            sig: SignatureKeys {
                params: params.iter().map(TypeR::key).collect(),
                results: results.iter().map(TypeR::key).collect(),
                variadic: sig.variadic,
            },
            results,
        }
    }
}
