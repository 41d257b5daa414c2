//! The row ids of the service's tables, one type each, so that an issue's id cannot be passed
//! where a job's is expected. Each is a transparent newtype over the `bigint` primary key: the
//! same JSON (`serde(transparent)`), the same text (`Display`), and with the `sqlx` feature (turned
//! on by `relay-store`) the same SQL encoding, so rows and binds use them directly while this crate
//! stays free of I/O.

/// Declares one id type (atuin's `new_uuid!` shape, over `i64`).
macro_rules! new_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            Hash,
            Default,
            serde::Serialize,
            serde::Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        pub struct $name(pub i64);

        impl $name {
            /// The plain number (for a metric label, a path, arithmetic on ids).
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                text.parse().map($name)
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                $name(id)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        // Plain numbers compare with ids (tests, counts read back as `bigint`); passing one
        // where an id is expected still needs the type.
        impl PartialEq<i64> for $name {
            fn eq(&self, other: &i64) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for i64 {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

new_id!(
    /// `issues.id`.
    IssueId
);
new_id!(
    /// `jobs.id`.
    JobId
);
new_id!(
    /// `deliveries.id`.
    DeliveryId
);
new_id!(
    /// `specs.id`.
    SpecId
);
new_id!(
    /// `outbox.id`.
    OutboxId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_and_write_as_their_number() {
        let id = IssueId(42);
        assert_eq!(id.to_string(), "42");
        assert_eq!(serde_json::to_value(id).unwrap(), serde_json::json!(42));
        assert_eq!(
            serde_json::from_value::<JobId>(serde_json::json!(7)).unwrap(),
            JobId(7)
        );
        assert_eq!("9".parse::<DeliveryId>().unwrap(), DeliveryId(9));
        assert_eq!(i64::from(OutboxId(3)), 3);
        assert_eq!(SpecId::from(5), 5);
    }
}
