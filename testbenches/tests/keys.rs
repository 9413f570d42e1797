//! Every run key is read, and every key read is a run key. The keys are the fields of
//! `cli::RunArgs` (`config::FIELDS`); the resolution reads them by name (`raw.get("vcs")`),
//! so a key misspelled there, or a flag nobody resolves, would be ignored without a word.
//! Reads the sources of `testbenches/src` for the names they look up.

use std::path::Path;
use testbenches::config::FIELDS;

/// The Rust sources under `dir`, as text.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// The string literals of `text` that follow `before` (`raw.get(` for instance).
fn literals_after<'a>(text: &'a str, before: &str) -> Vec<&'a str> {
    text.match_indices(before)
        .filter_map(|(i, _)| {
            let rest = text[i + before.len()..].strip_prefix('"')?;
            Some(&rest[..rest.find('"')?])
        })
        .collect()
}

#[test]
fn every_key_read_is_a_run_key_and_every_run_key_is_read() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut read = Vec::new();
    for (path, text) in &files {
        for key in literals_after(text, "raw.get(") {
            assert!(FIELDS.contains(&key), "{path}: raw.get(\"{key}\"): no run key is called {key:?}");
            read.push(key);
        }
    }
    assert!(read.len() > 50, "{read:?}");
    // Keys looked up through a list of names (`for f in ["rate", "cycles"]`) or resolved
    // elsewhere appear as literals in the sources all the same.
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    for key in FIELDS.iter() {
        assert!(all.contains(&format!("\"{key}\"")), "--{key} is a run key no source resolves");
    }
}
