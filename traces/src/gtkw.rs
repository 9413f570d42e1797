//! GTKWave save files: point at the dump and open with the traced signals grouped by node
//! and port, flit kinds and VC states shown by name (translate-filter files written beside
//! the save file).

use crate::tracer::{FLAG_NAMES, Tracer};
use router::VcActivity;
use std::fmt::Write as _;
use std::path::Path;

// GTKWave trace flags (see GTKWave's save-file format).
const HEX: u32 = 1 << 1;
const DEC: u32 = 1 << 2;
const BIN: u32 = 1 << 3;
const RJUSTIFY: u32 = 1 << 5;
const BLANK: u32 = 1 << 9;
const COLLAPSED: u32 = 1 << 12;
const FTRANSLATED: u32 = 1 << 13;
const CLOSED: u32 = 1 << 22;
const GRP_BEGIN: u32 = 1 << 23;
const GRP_END: u32 = 1 << 24;

/// Nodes whose groups start open; the others start closed.
const OPEN_NODES: usize = 8;

/// The translate-filter files beside the save file `save`: `<stem>.flags.txt`,
/// `<stem>.state.txt`, `<stem>.route.txt` and `<stem>.owner.txt`.
pub fn side_files(save: &Path) -> [std::path::PathBuf; 4] {
    let stem = save.with_extension("");
    ["flags.txt", "state.txt", "route.txt", "owner.txt"].map(|e| stem.with_extension(e))
}

/// The save file `save` for the dump at `dump` and its translate filters
/// ([`side_files`]): each path with its text, the save file first.
pub fn save_files(save: &Path, dump: &Path, tracer: &Tracer, title: &str) -> Vec<(std::path::PathBuf, String)> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let [flags_file, state_file, route_file, owner_file] = side_files(save);
    let mut names = String::new();
    for (v, name) in FLAG_NAMES {
        writeln!(names, "{v:01x} {name}").unwrap();
    }
    let mut states = String::new();
    for (v, name) in VcActivity::NAMES.iter().enumerate() {
        writeln!(states, "{v:01x} {name}").unwrap();
    }
    let mut routes = String::new();
    for (v, name) in tracer.route_names.iter().enumerate() {
        writeln!(routes, "{v:x} {name}").unwrap();
    }
    let mut owners = String::new();
    for (v, name) in &tracer.owner_names {
        writeln!(owners, "{v:x} {name}").unwrap();
    }

    let mut s = String::new();
    writeln!(s, "[*] flitwave: {title}").unwrap();
    writeln!(s, "[dumpfile] \"{}\"", abs(dump).display()).unwrap();
    writeln!(s, "[savefile] \"{}\"", abs(save).display()).unwrap();
    writeln!(s, "[timestart] 0").unwrap();
    writeln!(s, "[size] 1600 1000").unwrap();
    writeln!(s, "[pos] -1 -1").unwrap();
    writeln!(s, "[sst_width] 260").unwrap();
    writeln!(s, "[signals_width] 360").unwrap();
    writeln!(s, "[sst_expanded] 1").unwrap();
    writeln!(s, "[treeopen] top.").unwrap();
    let mut flags = u32::MAX;
    let mut set = |s: &mut String, f: u32| {
        if f != flags {
            writeln!(s, "@{f:x}").unwrap();
            flags = f;
        }
    };
    let filters = [abs(&flags_file), abs(&state_file), abs(&route_file), abs(&owner_file)];
    let sigs = &tracer.signals;
    // The clock on top, then the overview.
    for sig in sigs.iter().filter(|x| x.node == usize::MAX) {
        set(&mut s, BIN | RJUSTIFY);
        writeln!(s, "{}", sig.name).unwrap();
    }
    // Overview first: every link's valid and every NIC's ejections, one row each, so a
    // broadcast shows as a wave front without opening any group.
    set(&mut s, BLANK | GRP_BEGIN);
    writeln!(s, "-overview: links (valid) and NIC ejections").unwrap();
    set(&mut s, BIN | RJUSTIFY);
    // Rows named like `n0003 out1` (node and port) instead of the bare leaf name.
    let alias = |name: &str| {
        let parts: Vec<&str> = name.split('.').collect();
        format!("{} {}", parts[1], parts[parts.len() - 2])
    };
    for sig in sigs.iter().filter(|x| x.name.ends_with(".valid") && x.name.contains(".router.out")) {
        writeln!(s, "+{{{}}} {}", alias(&sig.name), sig.name).unwrap();
    }
    for sig in sigs.iter().filter(|x| x.name.contains(".nic.eject_valid")) {
        set(&mut s, if sig.width == 1 { BIN | RJUSTIFY } else { HEX | RJUSTIFY });
        let node = sig.name.split('.').nth(1).unwrap_or("");
        writeln!(s, "+{{{node} ejects}} {}", sig.name).unwrap();
    }
    set(&mut s, BLANK | GRP_END);
    writeln!(s, "-overview: links (valid) and NIC ejections").unwrap();
    let mut i = 0;
    while i < sigs.len() && sigs[i].node == usize::MAX {
        i += 1;
    }
    while i < sigs.len() {
        let node = sigs[i].node;
        let node_name = sigs[i].name.split('.').nth(1).unwrap_or("node").to_string();
        let closed = node >= OPEN_NODES;
        let grp = |closed: bool, end: bool| {
            let mut f = BLANK | if end { GRP_END } else { GRP_BEGIN };
            if closed {
                f |= CLOSED;
                if end {
                    f |= COLLAPSED;
                }
            }
            f
        };
        set(&mut s, grp(closed, false));
        writeln!(s, "-{node_name}").unwrap();
        while i < sigs.len() && sigs[i].node == node {
            let group = sigs[i].group.clone();
            // Links and the NIC open; buffers and credits closed.
            let sub_closed = group.contains("credits") || group.starts_with("in") || group.starts_with("inj");
            set(&mut s, grp(sub_closed, false));
            writeln!(s, "-{group}").unwrap();
            while i < sigs.len() && sigs[i].node == node && sigs[i].group == group {
                let sig = &sigs[i];
                let f = match sig.translate {
                    Some(_) => HEX | RJUSTIFY | FTRANSLATED,
                    None if sig.width == 1 => BIN | RJUSTIFY,
                    None if sig.width >= 16 => DEC | RJUSTIFY,
                    None => DEC | RJUSTIFY,
                };
                set(&mut s, f);
                match sig.translate {
                    Some("flags") => writeln!(s, "^1 {}", filters[0].display()).unwrap(),
                    Some("route") => writeln!(s, "^3 {}", filters[2].display()).unwrap(),
                    Some("owner") => writeln!(s, "^4 {}", filters[3].display()).unwrap(),
                    Some(_) => writeln!(s, "^2 {}", filters[1].display()).unwrap(),
                    None => {}
                }
                writeln!(s, "{}", sig.name).unwrap();
                i += 1;
            }
            set(&mut s, grp(sub_closed, true));
            writeln!(s, "-{group}").unwrap();
        }
        set(&mut s, grp(closed, true));
        writeln!(s, "-{node_name}").unwrap();
    }
    writeln!(s, "[pattern_trace] 1").unwrap();
    writeln!(s, "[pattern_trace] 0").unwrap();
    vec![(save.to_path_buf(), s), (flags_file, names), (state_file, states), (route_file, routes), (owner_file, owners)]
}
