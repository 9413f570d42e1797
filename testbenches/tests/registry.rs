//! The algorithm registry: every entry is something `--algorithm` runs, validates and lists.
//! A name in the registry without behaviour behind it fails here.

use fabric::TopologyKind;
use fabric::algorithms::{ALGORITHMS, Algorithm, Ports, Settings};
use testbenches::config::{Config, FIELDS, Raw};
use testbenches::run;

/// A small case of each topology the entries run on: a 3-cube, 8 nodes in a line, the
/// 4 x 4 mesh (M(4^1, 4^1) for edn, powers of two for the Seidel broadcasts), the 5 x 5
/// torus (one of dilated-diagonal's).
fn small(kind: &TopologyKind) -> &'static str {
    match kind {
        TopologyKind::Hypercube => "3",
        TopologyKind::Linear => "8",
        TopologyKind::Mesh => "4x4",
        TopologyKind::Torus => "5x5",
    }
}

fn resolve(a: &Algorithm, kind: &TopologyKind, extra: &[(&str, &str)]) -> Result<Config, String> {
    let fabric = [("algorithm", a.name), ("topology", kind.name()), ("dims", small(kind))];
    let raw = Raw::from_given(fabric.into_iter().chain(extra.iter().copied())).unwrap();
    Config::resolve(&raw).map_err(|e| e.to_string())
}

/// Every entry builds and runs on a small case of every topology it declares: each
/// delivery it declares exactly once, no failure its construction rules out, and its
/// program splits between threads exactly when the entry says so.
#[test]
fn every_algorithm_runs_where_it_says() {
    for a in ALGORITHMS {
        for kind in a.topologies {
            // The dynamic scheme runs for --cycles: a short window is enough here.
            let extra: &[(&str, &str)] = if a.settings == Settings::Dynamic { &[("cycles", "600")] } else { &[] };
            let cfg = resolve(a, kind, extra).unwrap_or_else(|e| panic!("{} on {}: {e}", a.name, kind.name()));
            let r = run::run(&cfg);
            let what = format!("{} on {} {}", a.name, kind.name(), small(kind));
            assert!(r.expected_deliveries > 0, "{what}: declares nothing");
            assert_eq!(r.deliveries, r.expected_deliveries, "{what}: {:?}", r.problems);
            assert_eq!(r.duplicate_deliveries + r.misrouted_deliveries, 0, "{what}: {:?}", r.problems);
            assert!(r.algorithm_failures.is_empty(), "{what}: {:?}", r.algorithm_failures);
            assert_eq!(r.exit_code(), 0, "{what}");
            assert_eq!(run::program(&cfg).0.splits(), a.splits, "{what}: the entry's splits and its program's disagree");
        }
    }
}

/// What an entry refuses, it refuses through the registry: another topology, a port model
/// it is not defined for, a root when it takes none, the flags only other algorithms take.
#[test]
fn every_algorithm_refuses_what_it_does_not_take() {
    let kinds = [TopologyKind::Hypercube, TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus];
    for a in ALGORITHMS {
        let home = &a.topologies[0];
        for kind in kinds.iter().filter(|k| !a.topologies.contains(k)) {
            // The Seidel broadcasts' cost model says it first, in its own words.
            let e = resolve(a, kind, &[]).expect_err(a.name);
            assert!(e.contains(a.name) && a.topologies.iter().all(|t| e.contains(t.name())), "{} on {}: {e}", a.name, kind.name());
        }
        match a.ports {
            // The Seidel cost model sets the fabric, one port a node among it.
            Ports::Any if a.settings == Settings::Seidel => {}
            Ports::Any => assert!(resolve(a, home, &[("ports", "2")]).is_ok(), "{}", a.name),
            Ports::AllOrOne => {
                assert!(resolve(a, home, &[("ports", "one")]).is_ok(), "{}", a.name);
                let e = resolve(a, home, &[("ports", "2")]).expect_err(a.name);
                assert!(e.starts_with("ports: 2: "), "{e}");
            }
            Ports::All(why) => {
                let e = resolve(a, home, &[("ports", "one")]).expect_err(a.name);
                assert_eq!(e, format!("ports: one: {} {why}: --ports all", a.name));
            }
        }
        if !a.rooted {
            let e = resolve(a, home, &[("root", "1")]).expect_err(a.name);
            assert!(e.starts_with("root: 1: "), "{e}");
        }
        for f in ALGORITHMS.iter().flat_map(|b| b.settings.flags()).filter(|f| !a.settings.flags().contains(f)) {
            let e = resolve(a, home, &[(f, "1")]).expect_err(a.name);
            assert!(e.starts_with(&format!("{f}: 1: only applies to --algorithm ")), "{} --{f}: {e}", a.name);
        }
    }
}

/// The flags an entry's settings name are flags the CLI and scenario files take.
#[test]
fn settings_flags_are_fields() {
    for a in ALGORITHMS {
        for f in a.settings.flags() {
            assert!(FIELDS.contains(f), "{}: --{f} is not a field", a.name);
        }
    }
}

/// `flitwave list` shows exactly the registry's names, in its order, and an unknown name is
/// refused with all of them.
#[test]
fn list_shows_exactly_the_registry() {
    let text = testbenches::list::text();
    let section = text.split("algorithms (--algorithm):\n").nth(1).expect("an algorithms section");
    let section = section.split("\n\n").next().unwrap();
    let listed: Vec<&str> =
        section.lines().filter(|l| l.starts_with("  ") && !l.starts_with("   ")).map(|l| l.split_whitespace().next().unwrap()).collect();
    let names: Vec<&str> = ALGORITHMS.iter().map(|a| a.name).collect();
    assert_eq!(listed, names);
    let raw = Raw::from_given([("algorithm", "no-such")]).unwrap();
    let e = Config::resolve(&raw).expect_err("an unknown algorithm").to_string();
    assert_eq!(e, format!("algorithm: no-such: one of {} (see flitwave list)", names.join(", ")));
}
