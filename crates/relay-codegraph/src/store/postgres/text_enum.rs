//! How the model's enums live in the code graph tables: as their lowercase spelling
//! (`as_str`/`parse` in [`crate::model`]) in plain `text` columns, so rows decode straight into
//! model types. A spelling the model does not know is an [`UnknownSpelling`] decode error, which
//! the store reports as corrupt data rather than as a failed query.

use sqlx::Postgres;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueRef};

use crate::model::{Confidence, EdgeKind, Language, SymbolKind};

/// A stored enum spelling that no model variant has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?}")]
pub struct UnknownSpelling {
    /// What the column holds (`"symbol kind"`, `"language"`...).
    pub what: &'static str,
    pub value: String,
}

/// Implements sqlx's `text` encoding for a model enum with `as_str(self) -> &'static str` and
/// `parse(&str) -> Option<Self>`.
macro_rules! text_enum {
    ($ty:ty, $what:literal) => {
        impl sqlx::Type<Postgres> for $ty {
            fn type_info() -> PgTypeInfo {
                <str as sqlx::Type<Postgres>>::type_info()
            }

            fn compatible(ty: &PgTypeInfo) -> bool {
                <str as sqlx::Type<Postgres>>::compatible(ty)
            }
        }

        impl PgHasArrayType for $ty {
            fn array_type_info() -> PgTypeInfo {
                <&str as PgHasArrayType>::array_type_info()
            }

            fn array_compatible(ty: &PgTypeInfo) -> bool {
                <&str as PgHasArrayType>::array_compatible(ty)
            }
        }

        impl sqlx::Encode<'_, Postgres> for $ty {
            fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
                <&str as sqlx::Encode<Postgres>>::encode(self.as_str(), buf)
            }
        }

        impl<'r> sqlx::Decode<'r, Postgres> for $ty {
            fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
                let text = <&str as sqlx::Decode<Postgres>>::decode(value)?;
                <$ty>::parse(text).ok_or_else(|| {
                    Box::new(UnknownSpelling {
                        what: $what,
                        value: text.to_owned(),
                    }) as BoxDynError
                })
            }
        }
    };
}

text_enum!(SymbolKind, "symbol kind");
text_enum!(Language, "language");
text_enum!(EdgeKind, "edge kind");
text_enum!(Confidence, "confidence");
