//! A setting's named choices, declared the one way every flag, config key and schema
//! reads them.

/// An enum of a setting's choices: `Copy`, with a `#[default]` variant, named in
/// kebab-case by configs and results (serde), flags (clap) and the JSON schemas.
/// Extra derives and attributes go before `enum` as usual.
macro_rules! setting_choice {
    ($(#[$attr:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Clone,
            Copy,
            Debug,
            Default,
            PartialEq,
            Eq,
            Hash,
            serde::Serialize,
            serde::Deserialize,
            clap::ValueEnum,
            schemars::JsonSchema,
        )]
        #[serde(rename_all = "kebab-case")]
        $(#[$attr])*
        $vis enum $name { $($body)* }
    };
}
pub(crate) use setting_choice;
