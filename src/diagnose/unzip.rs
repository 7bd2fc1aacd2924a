//! The zip a History Server serves an application's event logs in
//! (`/api/v1/applications/{id}/logs`, written by Java's `ZipOutputStream`): read from its central
//! directory (the local headers of streamed entries carry no sizes), stored or deflated entries
//! only, into a folder. Names that would leave the folder, and more bytes than an entry declares,
//! are refused.

use std::io::Read;
use std::path::{Component, Path};

/// Why a zip could not be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum UnzipError {
    /// Not a zip, or a damaged one.
    #[error("not a zip archive: {0}")]
    Format(String),
    /// An entry this reader does not read (ZIP64, encryption, another compression method).
    #[error("unsupported zip entry {name:?}: {what}")]
    Unsupported {
        /// The entry's name.
        name: String,
        /// What about it.
        what: String,
    },
    /// An entry whose name would leave the folder.
    #[error("zip entry {0:?} is not a relative path inside the archive")]
    Path(String),
    /// Writing the entries failed.
    #[error("writing {path}: {source}")]
    Io {
        /// Where.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// One central-directory entry: name, method, sizes, flags and its local header's offset.
struct Entry {
    name: String,
    method: u16,
    flags: u16,
    compressed: u64,
    size: u64,
    local: usize,
}

/// The central directory of `zip`.
fn entries(zip: &[u8]) -> Result<Vec<Entry>, UnzipError> {
    let bad = |w: &str| UnzipError::Format(w.to_string());
    // The end-of-central-directory record: the last signature within 64 KiB + 22 of the end.
    let from = zip.len().saturating_sub(65_557);
    let eocd = (from..zip.len().saturating_sub(21))
        .rev()
        .find(|i| u32_at(zip, *i) == Some(0x0605_4b50))
        .ok_or_else(|| bad("no end of central directory"))?;
    let count = u16_at(zip, eocd + 10).ok_or_else(|| bad("short end record"))? as usize;
    let mut at = u32_at(zip, eocd + 16).ok_or_else(|| bad("short end record"))? as usize;
    let mut out = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        if u32_at(zip, at) != Some(0x0201_4b50) {
            return Err(bad("damaged central directory"));
        }
        let f = |o: usize| u16_at(zip, at + o).ok_or_else(|| bad("short entry"));
        let g = |o: usize| u32_at(zip, at + o).ok_or_else(|| bad("short entry"));
        let (flags, method) = (f(8)?, f(10)?);
        let (compressed, size) = (g(20)?, g(24)?);
        let (n, e, c) = (f(28)? as usize, f(30)? as usize, f(32)? as usize);
        let local = g(42)?;
        let name = zip
            .get(at + 46..at + 46 + n)
            .ok_or_else(|| bad("short entry name"))?;
        let name = String::from_utf8_lossy(name).into_owned();
        if compressed == u32::MAX || size == u32::MAX || local == u32::MAX {
            return Err(UnzipError::Unsupported {
                name,
                what: "ZIP64".into(),
            });
        }
        out.push(Entry {
            name,
            method,
            flags,
            compressed: compressed.into(),
            size: size.into(),
            local: local as usize,
        });
        at += 46 + n + e + c;
    }
    Ok(out)
}

/// `name` as a relative path that stays inside the folder.
fn safe(name: &str) -> Result<&Path, UnzipError> {
    let p = Path::new(name);
    let ok = !name.contains('\\')
        && p.components().all(|c| matches!(c, Component::Normal(_)))
        && p.components().next().is_some();
    if ok {
        Ok(p)
    } else {
        Err(UnzipError::Path(name.to_string()))
    }
}

/// Unpack `zip` into `dir` (made if missing); the files written, relative to it.
pub fn unzip(zip: &[u8], dir: &Path) -> Result<Vec<String>, UnzipError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| UnzipError::Io { path, source }
    };
    let mut written = vec![];
    for e in entries(zip)? {
        let rel = safe(e.name.trim_end_matches('/'))?;
        let to = dir.join(rel);
        if e.name.ends_with('/') {
            std::fs::create_dir_all(&to).map_err(io(&to))?;
            continue;
        }
        if e.flags & 1 != 0 {
            return Err(UnzipError::Unsupported {
                name: e.name,
                what: "encrypted".into(),
            });
        }
        let bad = |w: &str| UnzipError::Format(format!("{}: {w}", e.name));
        let n = u16_at(zip, e.local + 26).ok_or_else(|| bad("short local header"))? as usize;
        let x = u16_at(zip, e.local + 28).ok_or_else(|| bad("short local header"))? as usize;
        if u32_at(zip, e.local) != Some(0x0403_4b50) {
            return Err(bad("damaged local header"));
        }
        let start = e.local + 30 + n + x;
        let data = zip
            .get(start..start + e.compressed as usize)
            .ok_or_else(|| bad("truncated"))?;
        let mut body = Vec::with_capacity(e.size.min(1 << 30) as usize);
        match e.method {
            0 => body.extend_from_slice(data),
            8 => {
                flate2::read::DeflateDecoder::new(data)
                    .take(e.size + 1)
                    .read_to_end(&mut body)
                    .map_err(|err| bad(&err.to_string()))?;
            }
            m => {
                return Err(UnzipError::Unsupported {
                    name: e.name,
                    what: format!("compression method {m}"),
                })
            }
        }
        if body.len() as u64 != e.size {
            return Err(bad("its size is not the one declared"));
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&to, &body).map_err(io(&to))?;
        written.push(rel.display().to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A zip of `files` as Java's `ZipOutputStream` writes one: deflated, with data descriptors
    /// (no sizes in the local headers), then the central directory.
    fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
        let (mut out, mut central) = (vec![], vec![]);
        for (name, data) in files {
            let mut z = flate2::write::DeflateEncoder::new(vec![], flate2::Compression::fast());
            z.write_all(data).unwrap();
            let packed = z.finish().unwrap();
            let offset = out.len() as u32;
            let crc = 0u32; // not checked by the reader
            out.extend(0x0403_4b50u32.to_le_bytes());
            out.extend([20, 0, 8, 0, 8, 0, 0, 0, 0, 0]);
            out.extend([0u8; 12]);
            out.extend((name.len() as u16).to_le_bytes());
            out.extend(0u16.to_le_bytes());
            out.extend(name.as_bytes());
            out.extend(&packed);
            out.extend(0x0807_4b50u32.to_le_bytes());
            out.extend(crc.to_le_bytes());
            out.extend((packed.len() as u32).to_le_bytes());
            out.extend((data.len() as u32).to_le_bytes());
            central.extend(0x0201_4b50u32.to_le_bytes());
            central.extend([20, 0, 20, 0, 8, 0, 8, 0, 0, 0, 0, 0]);
            central.extend(crc.to_le_bytes());
            central.extend((packed.len() as u32).to_le_bytes());
            central.extend((data.len() as u32).to_le_bytes());
            central.extend((name.len() as u16).to_le_bytes());
            central.extend([0u8; 12]);
            central.extend(offset.to_le_bytes());
            central.extend(name.as_bytes());
        }
        let at = out.len() as u32;
        let n = files.len() as u16;
        out.extend(&central);
        out.extend(0x0605_4b50u32.to_le_bytes());
        out.extend([0, 0, 0, 0]);
        out.extend(n.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(at.to_le_bytes());
        out.extend([0, 0]);
        out
    }

    #[test]
    fn a_streamed_zip_unpacks_from_its_central_directory() {
        let dir = std::env::temp_dir().join(format!("unzip-test-{}", std::process::id()));
        let big = vec![b'x'; 100_000];
        let z = zip(&[
            ("eventlog_v2_app-1/events_1_app-1.zstd", &big),
            ("eventlog_v2_app-1/appstatus_app-1", b""),
        ]);
        let got = unzip(&z, &dir).unwrap();
        assert_eq!(got.len(), 2);
        let p = dir.join("eventlog_v2_app-1/events_1_app-1.zstd");
        assert_eq!(std::fs::read(p).unwrap(), big);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_leaving_the_folder_and_damage_are_refused() {
        let dir = std::env::temp_dir().join(format!("unzip-bad-{}", std::process::id()));
        for name in ["../x", "/etc/x", "a/../../x", "a\\b"] {
            let e = unzip(&zip(&[(name, b"1")]), &dir).unwrap_err();
            assert!(matches!(e, UnzipError::Path(_)), "{name}: {e}");
        }
        assert!(matches!(unzip(b"<html>", &dir), Err(UnzipError::Format(_))));
        let mut z = zip(&[("a", b"hello")]);
        z.truncate(20);
        assert!(unzip(&z, &dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
