//! A small parser for the Prometheus text format, and views of parsed samples.

use std::collections::BTreeSet;

use super::truth::{add, key, nonzero, Series};
pub use crate::support::exposition::{parse_line, went_backwards, Sample};

/// A parsed scrape.
pub struct Scrape {
    pub samples: Vec<Sample>,
    pub duplicates: Vec<String>,
}

/// Parse the text format (classic or OpenMetrics): `name{k="v",...} value [timestamp]` lines;
/// comments skipped; `\\`, `\"` and `\n` unescaped in label values. Lines that do not parse are
/// reported as duplicates' neighbours would be: as problems.
pub fn parse_exposition(text: &str) -> Scrape {
    let mut samples = vec![];
    let mut problems = vec![];
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line) {
            Some(s) => {
                if !seen.insert(s.id()) {
                    problems.push(format!("duplicate: {}", s.id()));
                }
                samples.push(s);
            }
            None => problems.push(format!("unparsable line: {line}")),
        }
    }
    Scrape {
        samples,
        duplicates: problems,
    }
}

/// Samples re-rendered (for the artefact folder).
pub fn render(samples: &[Sample]) -> String {
    samples
        .iter()
        .map(|s| format!("{} {}\n", s.id(), s.value))
        .collect()
}

/// Sum the samples of `name` for `app_id` by the labels `keys` (other labels summed over).
pub fn project(samples: &[Sample], name: &str, app_id: &str, keys: &[&str]) -> Series {
    let mut m = Series::new();
    for smp in samples
        .iter()
        .filter(|x| x.name == name && x.label("app_id") == app_id)
    {
        let l: Vec<(&str, &str)> = keys
            .iter()
            .map(|k| {
                (
                    *k,
                    smp.labels
                        .get(*k)
                        .map(String::as_str)
                        .unwrap_or("<missing>"),
                )
            })
            .collect();
        add(&mut m, key(&l), smp.value);
    }
    nonzero(m)
}

/// The value of the only sample named `name` (`None` if there is not exactly one).
pub fn single(samples: &[Sample], name: &str) -> Option<f64> {
    let v: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == name)
        .map(|s| s.value)
        .collect();
    (v.len() == 1).then(|| v[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_parser_handles_escapes_and_special_values() {
        let s = parse_exposition(concat!(
            "# TYPE x counter\n",
            "x_total{a=\"say \\\"hi\\\"\",b=\"C:\\\\dir\",c=\"l1\\nl2\"} 3\n",
            "up 1\n",
            "h_bucket{le=\"+Inf\"} 4 1700000000000\n",
            "g{a=\"}{,=\"} NaN\n",
        ));
        assert!(s.duplicates.is_empty(), "{:?}", s.duplicates);
        assert_eq!(s.samples[0].label("a"), "say \"hi\"");
        assert_eq!(s.samples[0].label("b"), "C:\\dir");
        assert_eq!(s.samples[0].label("c"), "l1\nl2");
        assert_eq!(s.samples[0].value, 3.0);
        assert_eq!(
            (s.samples[1].name.as_str(), s.samples[1].value),
            ("up", 1.0)
        );
        assert_eq!(s.samples[2].label("le"), "+Inf");
        assert_eq!(s.samples[3].label("a"), "}{,=");
        assert!(s.samples[3].value.is_nan());
        assert_eq!(parse_exposition("x 1\nx 2\n").duplicates.len(), 1);
    }
}
