//! Reading the user's input files (scenarios, router files, sweep specifications): whole,
//! as UTF-8 text, and never more than [`MAX_INPUT_BYTES`], so that `flitwave run /dev/zero`
//! or a mistyped path to a waveform is refused in one line instead of reading until memory
//! runs out.

use std::io::Read;
use std::path::Path;

/// The largest input file read: 16 MiB, far beyond any scenario or router file.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The file's text, or why it cannot be read (the OS's reason, too large, not UTF-8),
/// worded to follow "cannot read it: ".
pub fn read_text(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!("larger than {} MiB", MAX_INPUT_BYTES >> 20));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_input_is_refused_at_the_cap() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e, "larger than 16 MiB");
    }

    #[test]
    fn text_is_read_and_binary_refused() {
        let dir = std::env::temp_dir().join(format!("flitwave-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "dims = \"3\"\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "dims = \"3\"\n");
        let bin = dir.join("bin.toml");
        std::fs::write(&bin, b"dims = \xff\n").unwrap();
        assert_eq!(read_text(&bin).unwrap_err(), "not UTF-8 text (byte 7)");
        assert!(read_text(&dir.join("absent.toml")).unwrap_err().contains("No such file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
