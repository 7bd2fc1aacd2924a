//! How the reports write a time (the text's and the pages'), with no other import: the
//! renderings all use it.

/// A duration: `850 ms`, `7.6 s`, `3 min 4 s`, `2 h 5 min`.
pub fn duration(s: f64) -> String {
    if s < 1.0 && s > 0.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 59.95 {
        format!("{s:.1} s")
    } else if s < 3599.5 {
        let t = s.round() as u64;
        format!("{} min {} s", t / 60, t % 60)
    } else {
        let t = (s / 60.0).round() as u64;
        format!("{} h {} min", t / 60, t % 60)
    }
}
