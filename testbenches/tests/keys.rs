//! The run keys: each is one field of a section of `config::Raw`, at once a flag of
//! `flitwave run`, a scenario key and a name for the commands that set keys by name (a
//! sweep's grid). These check that the three agree, and that every key is resolved: a flag
//! nobody reads would be accepted and ignored without a word.

use std::path::Path;
use testbenches::config::{FIELDS, Raw};

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

/// Every flag is a key by the same name: give each its own value by name, and the keys
/// read back by name are exactly the flags, each with its value (a field whose serde name
/// differed from its flag would come back under another name, or not at all).
#[test]
fn every_flag_is_a_key_by_its_own_name() {
    assert!(FIELDS.len() > 60, "{:?}", *FIELDS);
    let raw = Raw::from_given(FIELDS.iter().enumerate().map(|(i, k)| (k, format!("value-{i}")))).unwrap();
    let given = raw.given();
    let names: Vec<&str> = given.keys().map(String::as_str).collect();
    let mut flags = FIELDS.clone();
    flags.sort_unstable();
    assert_eq!(names, flags);
    for (i, k) in FIELDS.iter().enumerate() {
        assert_eq!(given[*k], format!("value-{i}"), "--{k}");
    }
    assert_eq!(Raw::from_given(given).unwrap(), raw);
}

/// A name that is not a key is refused in one line, never dropped.
#[test]
fn an_unknown_name_is_refused() {
    let e = Raw::from_given([("buffer-flit", "4")]).unwrap_err().to_string();
    assert!(e.starts_with("buffer-flit: 4: not a run key; the run keys are topology, dims"), "{e}");
    let e = Raw::from_given([("vcs", "2"), ("vc", "2")]).unwrap_err().to_string();
    assert!(e.starts_with("vc: 2: not a run key"), "{e}");
}

/// A list key (`--fault`, repeatable) keeps its items, one per line by name.
#[test]
fn a_list_key_keeps_its_items() {
    let raw = Raw::from_given([("fault", "link 5.0 at 100\nrouter 3 at 7")]).unwrap();
    assert_eq!(raw.faults.fault, ["link 5.0 at 100", "router 3 at 7"]);
    assert_eq!(raw.given()["fault"], "link 5.0 at 100\nrouter 3 at 7");
}

/// The flags override the scenario file key by key.
#[test]
fn flags_override_the_file_key_by_key() {
    let mut file = Raw::from_toml_str("vcs = 2\ndims = [4, 4]\ntopology = \"mesh\"\nquiet = true\n", "s.toml").unwrap();
    let flags = Raw::from_given([("vcs", "3"), ("rate", "0.1")]).unwrap();
    file.overlay(flags);
    assert_eq!(file.router.vcs.as_deref(), Some("3"));
    assert_eq!(file.topology.dims.as_deref(), Some("4x4"));
    assert_eq!(file.outputs.quiet.as_deref(), Some("on"));
    assert_eq!(file.workload.rate.as_deref(), Some("0.1"));
}

/// Every key is read by the resolution: by its field (`.packet_flits`), or, for those read
/// by name (a list of keys a check goes over, the cost model's constants), by its name in
/// quotes, in a source other than the one that defines the keys.
#[test]
fn every_run_key_is_resolved() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let all: String = files.iter().filter(|(p, _)| !p.ends_with("config/keys.rs")).map(|(_, t)| t.as_str()).collect();
    for key in FIELDS.iter() {
        let field = format!(".{}", key.replace('-', "_"));
        let by_field = all.match_indices(&field).any(|(i, _)| {
            let next = all[i + field.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '(')
        });
        assert!(by_field || all.contains(&format!("\"{key}\"")), "--{key} is a run key no source resolves");
    }
}
