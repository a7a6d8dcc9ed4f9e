//! The strategies vkerode runs: one entry each in [`strategy_list!`]. A new strategy is
//! its folder, its shaders and its entry there; the list makes its module
//! (`erosion/mod.rs`), its variant of `Algorithm` (`algorithm.rs`), its settings field
//! of `RunSettings` (`settings.rs`) and its place in `ALL_STRATEGIES` (`dispatch.rs`).
//! The list names no module, so that every file may build from it without a cycle.

/// Every strategy, in the order results list them, one entry each:
/// `Variant in folder with Settings;`, where
/// - `Variant` is its variant of `Algorithm` (the entry's doc comment is that choice's
///   help) and the unit struct in `folder` that implements `Strategy`;
/// - `folder` is its module under `erosion/`, and its name as configs and results spell
///   it;
/// - `Settings` is its settings struct in `folder` (with `DEFAULT`, `UNITS`, `HEADING`
///   and `CHOICE`), flattened into `RunSettings`.
///
/// It hands the list to `$then`, a macro that builds from it: `erosion/mod.rs` the
/// modules, `algorithm.rs` the enum, `settings.rs` the fields, this file the rest.
macro_rules! strategy_list {
    ($then:ident) => {
        $then! {
            /// The paper's: one thread per droplet, atomicAdd on a fixed-point heightfield.
            #[default]
            Droplets in droplets with DropletSettings;
            /// The grid-centric virtual-pipe shallow-water model (Mei et al. 2007).
            Pipes in pipes with PipesSettings;
            /// Thermal erosion: material slides to the neighbours past a talus angle
            /// (Musgrave, Kolb and Mace 1989).
            Thermal in thermal with ThermalSettings;
        }
    };
}
pub(crate) use strategy_list;
