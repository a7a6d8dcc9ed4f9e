//! The strategy a run uses, as the `algorithm` setting names it: one variant per entry
//! of the registry's list (`registry.rs`), which says which [`super::Strategy`] runs
//! each.

/// The enum of the registry's list.
macro_rules! algorithm_of {
    ($($(#[$attr:meta])* $variant:ident in $folder:ident with $settings:ident;)*) => {
        super::choice::setting_choice! {
            /// The strategy a run uses, as the `algorithm` setting names it.
            #[derive(PartialOrd, Ord)]
            pub enum Algorithm {
                $($(#[$attr])* $variant,)*
            }
        }
    };
}
super::registry::strategy_list!(algorithm_of);
