//! The OTLP form of each family, read from the metric catalogue
//! ([`crate::export::catalogue`]): OpenTelemetry names (dotted, unit in the unit field, labels as
//! attributes) and the attribute renames. `docs/otlp.md`'s tables are generated from the catalogue
//! (`export::docs`, a test).

#[cfg(test)]
use crate::export::catalogue::CATALOGUE;
pub use crate::export::catalogue::{attribute, AttrType, Instrument, Scale};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::families::Kind;

    #[test]
    fn every_family_is_mapped_with_its_type() {
        for f in CATALOGUE {
            let m = &f.otlp;
            let ok = match f.kind {
                Kind::Histogram => m.instrument == Instrument::Histogram,
                Kind::Counter => m.instrument == Instrument::Counter,
                Kind::Gauge | Kind::Info => {
                    matches!(m.instrument, Instrument::Gauge | Instrument::UpDownCounter)
                }
            };
            assert!(
                ok,
                "{}: {:?} cannot carry {:?}",
                f.name, m.instrument, f.kind
            );
        }
    }

    #[test]
    fn metrics_sharing_a_name_agree_and_differ_by_attribute() {
        for a in CATALOGUE {
            for b in CATALOGUE
                .iter()
                .filter(|b| b.otlp.name == a.otlp.name && b.name != a.name)
            {
                let (a, b) = (&a.otlp, &b.otlp);
                assert_eq!(
                    (a.unit, a.instrument, a.scale),
                    (b.unit, b.instrument, b.scale)
                );
                assert_ne!(a.extra, b.extra, "{} and {}", a.name, b.name);
            }
        }
    }
}
