//! Compiles every `glsl/*.comp` to SPIR-V with shaderc and embeds the modules in the
//! binary through `$OUT_DIR/shaders.rs`.
//!
//! A `.comp` file declares macro-selected variants in its header, as axes, one per line:
//!
//! ```glsl
//! //! axis atomics: racy=ATOMICS_RACY float=ATOMICS_FLOAT
//! //! axis build: counted=COUNT_WORK,WIDE=16
//! ```
//!
//! Each axis also has an unnamed option that defines nothing. Every combination of one
//! option per axis becomes a module, named `<stem>` followed by the chosen options' names
//! in axis order (`droplet`, `droplet_racy`, `droplet_counted`, `droplet_racy_counted`,
//! ...). `shaders.rs` lists every module with its stem and its option on each axis, so
//! the drivers look modules up by axis, never by a name they build.
//!
//! Modules are compiled as written, with no optimisation passes, except for options
//! that name the pseudo-macro `@O`: those go through shaderc's performance optimiser.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs, process};

const SHADER_DIR: &str = "glsl";
const AXIS_MARKER: &str = "//! axis ";
/// The pseudo-macro that turns on shaderc's optimiser for a variant.
const OPTIMISE: &str = "@O";

#[derive(Clone)]
struct Variant {
    name: String,
    macros: Vec<(String, Option<String>)>,
    /// (axis, option) for each axis of the file; "" is the unnamed option.
    options: Vec<(String, String)>,
}

struct ShaderModule {
    const_name: String,
    file_name: String,
    source_path: String,
    stem: String,
    options: Vec<(String, String)>,
}

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={SHADER_DIR}");

    let mut sources = Vec::new();
    collect_files(Path::new(SHADER_DIR), &mut sources);
    sources.sort();
    for path in &sources {
        println!("cargo:rerun-if-changed={}", path.display());
    }

    let compiler = shaderc::Compiler::new().expect("shaderc compiler");
    let mut modules = Vec::new();
    let mut failures = Vec::new();
    for path in sources
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "comp"))
    {
        match compile_with_variants(&compiler, path, &out_dir) {
            Ok(mut built) => modules.append(&mut built),
            Err(message) => failures.push(message),
        }
    }
    if !failures.is_empty() {
        for message in &failures {
            eprintln!("{message}");
        }
        eprintln!("error: {} shader file(s) failed to compile", failures.len());
        process::exit(1);
    }

    fs::write(out_dir.join("shaders.rs"), embed_source(&modules)).expect("write shaders.rs");

    println!("cargo:rustc-env=VKERODE_GIT_COMMIT={}", git_commit());
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}

/// The commit being built, marked "-dirty" when tracked files have changes.
fn git_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{commit}-dirty")
            } else {
                commit
            }
        }
        None => "unknown".into(),
    }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn compile_with_variants(
    compiler: &shaderc::Compiler,
    path: &Path,
    out_dir: &Path,
) -> Result<Vec<ShaderModule>, String> {
    let source = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: file name is not UTF-8", path.display()))?;
    let variants = parse_variants(path, &source)?;

    let mut built = Vec::new();
    for variant in &variants {
        let module_name = if variant.name.is_empty() {
            stem.to_string()
        } else {
            format!("{stem}_{}", variant.name)
        };
        let spirv = compile(compiler, path, &source, &variant.macros).map_err(|e| {
            if variant.name.is_empty() {
                e
            } else {
                format!("{e}\n(in variant {module_name} of {})", path.display())
            }
        })?;
        let file_name = format!("{module_name}.spv");
        fs::write(out_dir.join(&file_name), spirv).map_err(|e| format!("{file_name}: {e}"))?;
        built.push(ShaderModule {
            const_name: module_name.to_uppercase(),
            file_name,
            source_path: path.display().to_string(),
            stem: stem.to_string(),
            options: variant.options.clone(),
        });
    }
    Ok(built)
}

/// The product of the file's `//! axis` lines; the first variant is the plain one.
fn parse_variants(path: &Path, source: &str) -> Result<Vec<Variant>, String> {
    let mut variants = vec![Variant {
        name: String::new(),
        macros: Vec::new(),
        options: Vec::new(),
    }];
    for (line_index, line) in source.lines().enumerate() {
        let Some(spec) = line.trim().strip_prefix(AXIS_MARKER) else {
            continue;
        };
        let at = format!("{}:{}", path.display(), line_index + 1);
        let syntax =
            || format!("{at}: error: expected `//! axis AXIS: NAME=MACRO[,MACRO[=VALUE]] ...`");
        let (axis, options) = spec.split_once(':').ok_or_else(syntax)?;
        let axis = axis.trim().to_string();
        let mut options_parsed = Vec::new();
        for option in options.split_whitespace() {
            let (name, macros) = option.split_once('=').ok_or_else(syntax)?;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(format!(
                    "{at}: error: option name {name:?} must be [A-Za-z0-9]+"
                ));
            }
            let macros: Vec<_> = macros
                .split(',')
                .map(|m| match m.split_once('=') {
                    Some((k, v)) => (k.to_string(), Some(v.to_string())),
                    None => (m.to_string(), None),
                })
                .collect();
            options_parsed.push((name.to_string(), macros));
        }
        let mut product = Vec::new();
        for variant in &variants {
            let mut plain = variant.clone();
            plain.options.push((axis.clone(), String::new()));
            product.push(plain);
            for (name, macros) in &options_parsed {
                let mut all = variant.macros.clone();
                all.extend(macros.iter().cloned());
                let mut options = variant.options.clone();
                options.push((axis.clone(), name.clone()));
                product.push(Variant {
                    name: if variant.name.is_empty() {
                        name.clone()
                    } else {
                        format!("{}_{name}", variant.name)
                    },
                    macros: all,
                    options,
                });
            }
        }
        variants = product;
    }
    Ok(variants)
}

fn compile(
    compiler: &shaderc::Compiler,
    path: &Path,
    source: &str,
    macros: &[(String, Option<String>)],
) -> Result<Vec<u8>, String> {
    let mut options = shaderc::CompileOptions::new().map_err(|e| e.to_string())?;
    options.set_source_language(shaderc::SourceLanguage::GLSL);
    // Vulkan 1.2 / SPIR-V 1.5: specialised workgroup sizes stay LocalSize, not LocalSizeId.
    options.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_2 as u32,
    );
    options.set_target_spirv(shaderc::SpirvVersion::V1_5);
    let optimise = macros.iter().any(|(name, _)| name == OPTIMISE);
    options.set_optimization_level(if optimise {
        shaderc::OptimizationLevel::Performance
    } else {
        shaderc::OptimizationLevel::Zero
    });
    options.set_warnings_as_errors();
    for (name, value) in macros.iter().filter(|(name, _)| name != OPTIMISE) {
        options.add_macro_definition(name, value.as_deref());
    }
    options.set_include_callback(|requested, _kind, requesting, _depth| {
        let base = Path::new(requesting)
            .parent()
            .unwrap_or(Path::new(SHADER_DIR));
        let candidates = [base.join(requested), Path::new(SHADER_DIR).join(requested)];
        for candidate in candidates {
            if let Ok(content) = fs::read_to_string(&candidate) {
                return Ok(shaderc::ResolvedInclude {
                    resolved_name: candidate.display().to_string(),
                    content,
                });
            }
        }
        Err(format!(
            "cannot find {requested:?} next to {requesting} or in {SHADER_DIR}/"
        ))
    });

    let input_name = path.display().to_string();
    let artifact = compiler
        .compile_into_spirv(
            source,
            shaderc::ShaderKind::Compute,
            &input_name,
            "main",
            Some(&options),
        )
        .map_err(|e| format!("{e}"))?;
    Ok(artifact.as_binary_u8().to_vec())
}

fn embed_source(modules: &[ShaderModule]) -> String {
    let mut out = String::from("// Generated by build.rs: SPIR-V modules compiled from glsl/.\n");
    out.push_str("/// Every module with its source file's stem and its option on each of the file's axes.\npub const MODULES: &[crate::gpu::ShaderModule] = &[\n");
    for m in modules {
        let options: Vec<String> = m
            .options
            .iter()
            .map(|(axis, option)| format!("({axis:?}, {option:?})"))
            .collect();
        writeln!(
            out,
            "    crate::gpu::ShaderModule {{ spirv: {}, stem: {:?}, options: &[{}] }},",
            m.const_name,
            m.stem,
            options.join(", ")
        )
        .expect("write to String");
    }
    out.push_str("];\n");
    for m in modules {
        writeln!(
            out,
            "/// SPIR-V of `{}` (`{}`).\npub const {}: crate::gpu::Spirv = crate::gpu::Spirv {{ name: {:?}, bytes: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{}\")) }};",
            m.source_path,
            m.file_name,
            m.const_name,
            m.file_name.trim_end_matches(".spv"),
            m.file_name
        )
        .expect("write to String");
    }
    out
}
