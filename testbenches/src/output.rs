//! Every file a command writes goes through here, as a transaction: it is written to a
//! temporary file in the same directory (`.NAME.flitwave-PID-N.tmp`) and renamed over the
//! target only when complete, so a failed, refused or interrupted run never deletes,
//! truncates or half-writes a file that existed before. Targets that are not regular files
//! (`-`, `/dev/stdout`, `/dev/null`, a pipe) are written directly. Paths are checked up
//! front against the inputs and against each other ([`check_paths`]).
//!
//! Exit codes: a path refused before the run is bad input (2); a file that could not be
//! written after the run (a full disk) is an I/O failure, [`EXIT_WRITE_FAILED`], with what
//! was kept said in the message.

use crate::config::ConfigError;
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Exit code of a command some of whose outputs could not be written after it ran.
pub const EXIT_WRITE_FAILED: i32 = 1;

/// Temporary files not yet renamed or removed: [`abandon`] removes them when a second
/// interrupt ends the process at once.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove every temporary file still pending (the process is about to end).
pub fn abandon() {
    for p in pending().drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// One output file being written.
#[derive(Debug)]
pub struct Output {
    /// The flag or key that named it (`json`, `vcd`, `out`).
    field: String,
    /// As the user wrote it.
    shown: String,
    /// Where it ends up: the path, or the file a symbolic link at it points to.
    target: PathBuf,
    /// The temporary file written, renamed over `target` by [`commit_all`]; `None` for a
    /// target written directly.
    tmp: Option<PathBuf>,
    /// Why writing it failed, if it did.
    error: Option<String>,
}

impl Output {
    /// Begin the output `path` of `field`: refused (exit 2) if no file can be created beside
    /// it, or if it is a directory or a device that refuses writes (`/dev/full`).
    pub fn begin(field: &str, path: impl AsRef<Path>) -> Result<Output, ConfigError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let refuse = |why: String| ConfigError::new(field, &shown, why);
        if path.as_os_str().is_empty() {
            return Err(refuse("a file path".into()));
        }
        let mut out = Output { field: field.to_string(), shown: shown.clone(), target: path.to_path_buf(), tmp: None, error: None };
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(refuse("a directory; a file path is needed".into())),
            Ok(m) if !m.is_file() => {
                probe_device(path, &m).map_err(|e| refuse(format!("cannot write it: {e}")))?;
                return Ok(out);
            }
            // An existing file, perhaps behind a symbolic link (which stays a link).
            Ok(m) => {
                // Not replaced if it could not be written in place (a read-only file).
                std::fs::OpenOptions::new().write(true).open(path).map_err(|e| refuse(format!("cannot write it: {e}")))?;
                out.target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
                out.tmp = Some(out.create_tmp(Some(m.permissions())).map_err(|e| refuse(format!("cannot write beside it: {e}")))?);
            }
            Err(_) => out.tmp = Some(out.create_tmp(None).map_err(|e| refuse(format!("cannot create it: {e}")))?),
        }
        Ok(out)
    }

    /// Create the temporary file beside the target, with the target's permissions.
    fn create_tmp(&self, permissions: Option<std::fs::Permissions>) -> std::io::Result<PathBuf> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let name = self.target.file_name().ok_or_else(|| std::io::Error::other("not a file name"))?;
        let tmp_name = format!(".{}.flitwave-{}-{}.tmp", name.to_string_lossy(), std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed));
        let tmp = self.target.with_file_name(tmp_name);
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        pending().push(tmp.clone());
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        Ok(tmp)
    }

    /// Where to write now: the temporary file, or the target itself if written directly.
    pub fn path(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.target)
    }

    /// The path as the user gave it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Why writing it failed, if it did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Write the whole content (a failure is recorded, and reported by [`commit_all`]).
    pub fn write(&mut self, bytes: &[u8]) {
        let r = (|| {
            let mut f = if self.tmp.is_some() {
                std::fs::File::create(self.path())?
            } else {
                std::fs::OpenOptions::new().write(true).open(self.path())?
            };
            f.write_all(bytes)?;
            f.flush()
        })();
        if let Err(e) = r {
            self.fail(e);
        }
    }

    /// Writing it failed (a writer that took [`Output::path`] found why).
    pub fn fail(&mut self, e: impl Display) {
        self.error.get_or_insert_with(|| e.to_string());
    }

    /// Rename the complete file into place.
    fn commit(&mut self) {
        if self.error.is_some() {
            return;
        }
        if let Some(tmp) = self.tmp.take() {
            match std::fs::rename(&tmp, &self.target) {
                Ok(()) => pending().retain(|p| *p != tmp),
                Err(e) => {
                    self.tmp = Some(tmp);
                    self.fail(e);
                }
            }
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(&tmp);
            pending().retain(|p| *p != tmp);
        }
    }
}

/// A device that discards what is written to it (`/dev/null`, `/dev/zero`) takes a byte
/// and `/dev/full` refuses it, so that a run does not go to its end to find that out; any
/// other device or pipe is written when the time comes.
fn probe_device(path: &Path, m: &std::fs::Metadata) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        // The memory devices of Linux: major 1, minors 3 (null), 5 (zero) and 7 (full).
        let rdev = m.rdev();
        if m.file_type().is_char_device() && libc::major(rdev) == 1 && [3, 5, 7].contains(&libc::minor(rdev)) {
            std::fs::OpenOptions::new().write(true).open(path)?.write_all(b"\n")?;
        }
    }
    let _ = (path, m);
    Ok(())
}

/// Refuse `--FIELD -` when standard output is `/dev/full` ([`Output::begin`]'s test).
pub fn check_stdout(field: &str) -> Result<(), ConfigError> {
    let p = Path::new("/dev/stdout");
    match std::fs::metadata(p) {
        Ok(m) if !m.is_file() && !m.is_dir() => {
            probe_device(p, &m).map_err(|e| ConfigError::new(field, "- (standard output)", format!("cannot write it: {e}")))
        }
        _ => Ok(()),
    }
}

/// Rename every output written completely into place. If any failed: one line naming
/// each failed path and the OS's reason, saying that it is as it was before, and which
/// outputs were written.
pub fn commit_all(outputs: impl IntoIterator<Item = Output>) -> Result<(), String> {
    let (mut written, mut failed) = (Vec::new(), Vec::new());
    for mut o in outputs {
        o.commit();
        match &o.error {
            None => written.push(o.shown.clone()),
            Some(e) => failed.push(format!(
                "{}: {}: cannot write it: {e} ({})",
                o.field,
                o.shown,
                if o.tmp.is_some() { "left as it was before the run" } else { "written in part" }
            )),
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    let kept = if written.is_empty() { "no output written".to_string() } else { format!("written: {}", written.join(", ")) };
    Err(failed_after_run(format!("{}; {kept}", failed.join("; "))).to_string())
}

/// An output that could not be written after the work, described in `message`: an I/O
/// failure ([`write_failed`]).
pub fn failed_after_run(message: String) -> ConfigError {
    WRITE_FAILED.store(true, Ordering::Relaxed);
    ConfigError::Outputs(message)
}

/// Did an output fail to be written ([`commit_all`])? Then the command's error is an I/O
/// failure, [`EXIT_WRITE_FAILED`], not bad input.
pub fn write_failed() -> bool {
    WRITE_FAILED.load(Ordering::Relaxed)
}

static WRITE_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Write `text` to `path` as one transaction: refused (exit 2) if it cannot be begun, an
/// error naming the path and the reason if it cannot be written.
pub fn write_file(field: &str, path: impl AsRef<Path>, text: impl AsRef<[u8]>) -> Result<(), ConfigError> {
    let mut o = Output::begin(field, path)?;
    o.write(text.as_ref());
    commit_all([o]).map_err(ConfigError::Outputs)
}

/// Refuse outputs that are one of the inputs, or the same file as another output (each
/// would overwrite the other): `(field, path)` pairs, the side files among the outputs.
/// Devices and pipes (`/dev/null` for every output, say) take any number of writers.
pub fn check_paths(outputs: &[(&str, &str)], inputs: &[(&str, &Path)]) -> Result<(), ConfigError> {
    let special = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let inputs: Vec<(&str, FileKey)> = inputs.iter().filter(|(_, p)| !special(p)).map(|&(f, p)| (f, same_file_key(p))).collect();
    let mut seen: Vec<(&str, &str, FileKey)> = Vec::new();
    for &(f, p) in outputs.iter().filter(|(_, p)| *p != "-" && !p.is_empty() && !special(Path::new(p))) {
        let k = same_file_key(Path::new(p));
        if let Some((g, _)) = inputs.iter().find(|(_, i)| *i == k) {
            return Err(ConfigError::new(f, p, format!("the {g} file this command reads; an output may not overwrite an input")));
        }
        if let Some((g, q, _)) = seen.iter().find(|(_, _, j)| *j == k) {
            return Err(ConfigError::new(f, p, format!("the same file as --{g} {q}; give each output a file of its own")));
        }
        seen.push((f, p, k));
    }
    Ok(())
}

/// What tells two names of one file apart from names of two: the device and inode of a
/// file that exists (hard links too), else the path.
#[derive(PartialEq)]
enum FileKey {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The [`FileKey`] of `p`, whether or not it exists yet: a file that does not is named by
/// its directory's canonical path joined with its name (or `p` itself if the directory does
/// not exist either).
fn same_file_key(p: &Path) -> FileKey {
    #[cfg(unix)]
    if let Ok(m) = std::fs::metadata(p) {
        use std::os::unix::fs::MetadataExt;
        return FileKey::Inode(m.dev(), m.ino());
    }
    if let Ok(c) = p.canonicalize() {
        return FileKey::Path(c);
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    FileKey::Path(match (dir.canonicalize(), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flitwave-output-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A file that existed is replaced only by a complete one; an output dropped before its
    /// commit leaves it as it was and no temporary file behind.
    #[test]
    fn replaced_whole_or_not_at_all() {
        let d = dir("whole");
        let p = d.join("r.json");
        std::fs::write(&p, "keep\n").unwrap();
        let mut o = Output::begin("json", &p).unwrap();
        o.write(b"new\n");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep\n");
        drop(o);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep\n");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "no temporary file left");
        write_file("json", &p, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_names_the_reason() {
        let d = dir("failed");
        let (a, b) = (d.join("a.csv"), d.join("b.csv"));
        std::fs::write(&a, "old\n").unwrap();
        let mut oa = Output::begin("stats-csv", &a).unwrap();
        oa.fail(std::io::Error::from_raw_os_error(libc::ENOSPC));
        let mut ob = Output::begin("json", &b).unwrap();
        ob.write(b"{}\n");
        let e = commit_all([oa, ob]).unwrap_err();
        assert!(e.starts_with(&format!("stats-csv: {}: cannot write it: No space left on device", a.display())), "{e}");
        assert!(e.contains("left as it was before the run") && e.ends_with(&format!("written: {}", b.display())), "{e}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "{}\n");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_device_is_refused_at_once() {
        let e = Output::begin("json", "/dev/full").unwrap_err().to_string();
        assert_eq!(e, "json: /dev/full: cannot write it: No space left on device (os error 28)");
        assert!(Output::begin("json", "/dev/null").is_ok());
    }

    #[test]
    fn outputs_may_not_be_inputs_or_each_other() {
        let d = dir("paths");
        let s = d.join("s.toml");
        std::fs::write(&s, "dims = 3\n").unwrap();
        let ss = s.to_str().unwrap();
        let e = check_paths(&[("json", ss)], &[("scenario", &s)]).unwrap_err().to_string();
        assert_eq!(e, format!("json: {ss}: the scenario file this command reads; an output may not overwrite an input"));
        // The same file by another name, and by a hard link.
        let other = format!("{}/./s.toml", d.display());
        assert!(check_paths(&[("vcd", &other)], &[("scenario", &s)]).is_err());
        std::fs::hard_link(&s, d.join("link.toml")).unwrap();
        assert!(check_paths(&[("vcd", d.join("link.toml").to_str().unwrap())], &[("scenario", &s)]).is_err());
        let r = format!("{}/r.json", d.display());
        let e = check_paths(&[("json", &r), ("gtkw side file", &r)], &[]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("gtkw side file: {r}: the same file as --json")), "{e}");
        assert!(check_paths(&[("json", "/dev/null"), ("vcd", "/dev/null"), ("stats-csv", "-")], &[]).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
