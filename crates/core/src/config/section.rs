//! The values of the sections declared outside the core (`declared.rs`): a source's (`spark`,
//! `event_log`) lives in its folder in the binary. [`Settings`](super::Settings) keeps each as
//! an opaque value ([`Sections`]) and hands it back typed (`Settings::section`).

use std::any::Any;
use std::fmt::Debug;

use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::Value;

/// A section's typed value: its name in files (`spark`), a default, and how it prints.
pub trait SectionConfig: Any + Debug + Clone + Default + Serialize + Send + Sync {
    /// The section's name: the first part of its keys (`spark` for `spark.urls`).
    const NAME: &'static str;
}

/// A section's value, type-erased.
pub trait Section: Any + Debug + Send + Sync {
    /// [`SectionConfig::NAME`].
    fn name(&self) -> &'static str;
    /// A copy.
    fn boxed(&self) -> Box<dyn Section>;
    /// As `check-config` prints it.
    fn json(&self) -> Value;
    /// For downcasting.
    fn any(&self) -> &dyn Any;
    /// For downcasting.
    fn any_mut(&mut self) -> &mut dyn Any;
}

impl<T: SectionConfig> Section for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn boxed(&self) -> Box<dyn Section> {
        Box::new(self.clone())
    }
    fn json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
    fn any(&self) -> &dyn Any {
        self
    }
    fn any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The declared sections' values, in declaration order.
#[derive(Debug, Default)]
pub struct Sections(Vec<Box<dyn Section>>);

impl Clone for Sections {
    fn clone(&self) -> Self {
        Sections(self.0.iter().map(|s| s.boxed()).collect())
    }
}

impl Serialize for Sections {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for v in &self.0 {
            m.serialize_entry(v.name(), &v.json())?;
        }
        m.end()
    }
}

impl Sections {
    /// These values: one a section.
    pub fn of(values: Vec<Box<dyn Section>>) -> Sections {
        Sections(values)
    }

    /// Section `T`'s value, if there is one.
    pub fn get<T: SectionConfig>(&self) -> Option<&T> {
        self.0.iter().find_map(|s| s.any().downcast_ref::<T>())
    }

    /// Section `T`'s value, to change (added at its default when missing).
    pub fn get_mut<T: SectionConfig>(&mut self) -> &mut T {
        let at = match self.0.iter().position(|s| s.any().is::<T>()) {
            Some(n) => n,
            None => {
                self.0.push(Box::new(T::default()));
                self.0.len() - 1
            }
        };
        match self.0[at].any_mut().downcast_mut::<T>() {
            Some(t) => t,
            None => unreachable!("the section at {at} is a {}", T::NAME),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, Serialize, PartialEq)]
    struct Toy {
        level: u32,
    }

    impl SectionConfig for Toy {
        const NAME: &'static str = "toy";
    }

    #[test]
    fn a_section_is_read_back_typed_and_printed_by_its_name() {
        let mut s = crate::config::Settings::default();
        assert_eq!(*s.section::<Toy>(), Toy::default(), "missing: its default");
        s.section_mut::<Toy>().level = 3;
        assert_eq!(s.section::<Toy>().level, 3);
        let copy = s.clone();
        assert_eq!(copy.section::<Toy>().level, 3);
        let v = serde_json::to_value(&copy).unwrap();
        assert_eq!(v["toy"], serde_json::json!({"level": 3}));
    }
}
