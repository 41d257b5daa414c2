//! Checks incremental updates against full indexes on a real tree:
//! `incr_check PATH FILE FROM=>TO [FILE FROM=>TO ...]` applies each edit in turn (then all
//! reverts in reverse order), updating incrementally, and compares the graph with a full index
//! after every step. **This writes into PATH: use a scratch copy.**

use std::collections::HashSet;
use std::path::Path;

use relay_codegraph::index::{IndexOptions, Indexer, index_repository};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(
        args.first()
            .ok_or("usage: incr_check PATH FILE FROM=>TO ...")?,
    );
    let mut indexer = Indexer::full_with(root, IndexOptions::default())?;
    let mut done: Vec<(String, String)> = Vec::new();
    let mut steps: Vec<(String, String, String)> = Vec::new();
    for pair in args[1..].chunks(2) {
        let [file, edit] = pair else {
            return Err("edits come in pairs".into());
        };
        let edit = edit.replace("\\n", "\n").replace("\\t", "\t");
        let (from, to) = edit.split_once("=>").ok_or("FROM=>TO")?;
        steps.push((file.clone(), from.to_owned(), to.to_owned()));
    }
    let mut failures = 0;
    let mut run = |indexer: &mut Indexer,
                   file: &str,
                   text: &str|
     -> Result<(), Box<dyn std::error::Error>> {
        let path = root.join(file);
        std::fs::write(&path, text)?;
        let delta = indexer.update(std::slice::from_ref(&path))?;
        let full = index_repository(root, &IndexOptions::default())?.graph;
        let inc = indexer.graph();
        let same = inc == full;
        println!(
            "{file}: {} ms, resolved {}, delta files {}, same as full: {same} (edges {} vs {}, symbols {} vs {})",
            delta.duration.as_millis(),
            delta.resolved,
            delta.files.len(),
            inc.edges.len(),
            full.edges.len(),
            inc.symbols.len(),
            full.symbols.len()
        );
        if !same {
            failures += 1;
            let set = |g: &relay_codegraph::model::Graph| -> HashSet<String> {
                g.edges
                    .iter()
                    .map(|e| format!("{e:?}"))
                    .chain(g.symbols.iter().map(|s| format!("{s:?}")))
                    .collect()
            };
            let (a, b) = (set(&inc), set(&full));
            for e in b.difference(&a).take(8) {
                println!("  missing {e}");
            }
            for e in a.difference(&b).take(8) {
                println!("  extra {e}");
            }
        }
        Ok(())
    };
    for (file, from, to) in &steps {
        let original = std::fs::read_to_string(root.join(file))?;
        if !original.contains(from.as_str()) {
            return Err(format!("{file} does not contain {from:?}").into());
        }
        done.push((file.clone(), original.clone()));
        run(&mut indexer, file, &original.replacen(from.as_str(), to, 1))?;
    }
    for (file, original) in done.into_iter().rev() {
        run(&mut indexer, &file, &original)?;
    }
    if failures > 0 {
        return Err(format!("{failures} step(s) differ from a full index").into());
    }
    Ok(())
}
