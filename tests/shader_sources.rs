//! The paper's main() is kept three ways: verbatim in glsl/droplet.comp, its loop body
//! as dropletStep() (glsl/include/droplet_step.glsl) for the kernels that keep a
//! droplet between dispatches, and around that function in glsl/droplet_stepped.comp,
//! the kernel of the corrected physics. These tests pin all three to the paper's
//! listing (tests/data/paper_main.glsl, copied from the paper so that nothing outside
//! the repository is read), statement for statement, so that an edit to one cannot
//! silently leave the others behind; and check on the GPU (lavapipe, under validation)
//! that the stepped kernel leaves droplet.comp's heights, bit for bit. (tests/stagger.rs
//! checks the same of the passes kernel.)

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, DropletJob, DropletKernel, DropletShader, FixedHeightfield, KernelParams,
    KernelVariant, Physics, Rounding, SpawnMode,
};

use common::{assert_validation_clean, default_job, fixed_terrain, validated_device};

/// The paper's main(), lines 103-161 of the seed, under a one-line comment.
const PAPER_MAIN: &str = include_str!("data/paper_main.glsl");
const DROPLET: &str = include_str!("../glsl/droplet.comp");
const STEPPED: &str = include_str!("../glsl/droplet_stepped.comp");
const STEP: &str = include_str!("../glsl/include/droplet_step.glsl");

const MAIN: &str = "void main()";
const LOOP: &str = "for (int step = 0; step < MAX_LIFETIME; ++step)";
const SPEED: &str = "speed = sqrt(max(0.0, speed * speed + deltaH * 9.81));";
const STEP_CALL: &str = "if (!dropletStep(pos, dir, speed, water, sediment)) break;";

/// The text between the `{` that ends `head` and its matching `}`.
fn block_after<'a>(source: &'a str, head: &str) -> &'a str {
    let start = source
        .find(head)
        .unwrap_or_else(|| panic!("{head:?} not found"))
        + head.len();
    let open = start + source[start..].find('{').expect("an opening brace");
    let mut depth = 0;
    for (i, c) in source[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &source[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces after {head:?}");
}

/// The statements of a block: comments and layout dropped, one per `;`, `{` or `}`.
fn statements(block: &str) -> Vec<String> {
    let code: String = block
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let mut current = String::new();
    for c in code.chars() {
        current.push(c);
        if matches!(c, ';' | '{' | '}') {
            let statement = current.split_whitespace().collect::<Vec<_>>().join(" ");
            if !statement.is_empty() {
                out.push(statement);
            }
            current.clear();
        }
    }
    out
}

/// Whether a statement is a bare function call, such as `recordDeath(pos, sediment);`.
fn is_call(statement: &str) -> bool {
    let Some((name, rest)) = statement.split_once('(') else {
        return false;
    };
    let name = name.trim();
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !["if", "for", "while", "switch", "return"].contains(&name)
        && rest.ends_with(");")
}

/// The statements of `source`'s main() that follow the paper's main() `paper`, which
/// must come first and unchanged; every one after it must be a call.
fn calls_after(source: &str, paper: &[String], name: &str) -> Vec<String> {
    let ours = statements(block_after(source, MAIN));
    assert!(
        ours.len() >= paper.len() && ours[..paper.len()] == *paper,
        "{name}: main() is not the paper's:\n{ours:#?}"
    );
    let extra = ours[paper.len()..].to_vec();
    for statement in &extra {
        assert!(is_call(statement), "{name}: {statement:?} after the loop");
    }
    extra
}

#[test]
fn the_papers_listing_is_the_one_copied() {
    let main = statements(block_after(PAPER_MAIN, MAIN));
    assert!(main.len() > 30, "main() was found: {main:?}");
    assert_eq!(
        main.first().map(String::as_str),
        Some("uint id = gl_GlobalInvocationID.x;")
    );
    // The listing ends with the loop's closing brace: anything past it is after the loop.
    assert_eq!(main.last().map(String::as_str), Some("}"));
    assert_eq!(main.iter().filter(|s| *s == SPEED).count(), 1);
}

#[test]
fn droplet_comp_main_is_the_papers_statement_for_statement() {
    let paper = statements(block_after(PAPER_MAIN, MAIN));
    let extra = calls_after(DROPLET, &paper, "glsl/droplet.comp");
    assert_eq!(extra, ["recordDeath(pos, sediment);"]);
}

#[test]
fn droplet_step_is_the_papers_loop_body_but_for_the_physics_sign() {
    let loop_body = statements(block_after(PAPER_MAIN, LOOP))
        .into_iter()
        .map(|s| s.replace("break;", "return false;"))
        .collect::<Vec<_>>();
    assert!(loop_body.len() > 20, "the loop was found: {loop_body:?}");
    // The one statement that differs: deltaH times PHYSICS_SIGN in the speed update.
    let expected = loop_body
        .iter()
        .map(|s| {
            if s == SPEED {
                s.replace("+ deltaH", "+ PHYSICS_SIGN * deltaH")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>();
    assert_eq!(loop_body.iter().filter(|s| *s == SPEED).count(), 1);
    let mut function_body = statements(block_after(STEP, "bool dropletStep("));
    // The loop's last statement stops the droplet; the function's says whether it goes on.
    assert_eq!(
        function_body.pop().as_deref(),
        Some("return !(water < 0.01);")
    );
    function_body.push("if (water < 0.01) return false;".into());
    assert_eq!(function_body, expected);
}

#[test]
fn droplet_stepped_main_is_the_papers_around_droplet_step() {
    let paper = block_after(PAPER_MAIN, MAIN);
    let body = block_after(paper, LOOP);
    let expected = statements(&paper.replacen(body, STEP_CALL, 1));
    assert_eq!(
        expected.iter().filter(|s| *s == STEP_CALL).count(),
        1,
        "{expected:#?}"
    );
    let extra = calls_after(STEPPED, &expected, "glsl/droplet_stepped.comp");
    let paper = statements(paper);
    assert_eq!(extra, calls_after(DROPLET, &paper, "glsl/droplet.comp"));
}

fn kernel(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    shader: DropletShader,
    params: &KernelParams,
) -> DropletKernel {
    let variant = KernelVariant {
        shader,
        ..KernelVariant::paper(AtomicMode::Int, SpawnMode::Global)
    };
    DropletKernel::for_params(ctx, 64, params, variant).unwrap()
}

#[test]
fn with_the_papers_physics_the_stepped_kernel_leaves_droplet_comps_heights_bit_for_bit() {
    const SIZE: u32 = 96;
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 11);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    // Stochastic rounding draws from the count of rounding calls: both must count alike.
    for rounding in [Rounding::Trunc, Rounding::Nearest, Rounding::Stochastic] {
        let params = KernelParams {
            physics: Physics::Paper,
            rounding,
            ..KernelParams::default()
        };
        let paper = kernel(&ctx, DropletShader::Paper, &params);
        let stepped = kernel(&ctx, DropletShader::Stepped, &params);
        assert!(stepped
            .variant()
            .module_name()
            .starts_with("droplet_stepped"));
        for seed in 1..=6 {
            let one = DropletJob {
                params,
                ..default_job(1, seed)
            };
            let expected = paper.run_counted(&map, &one, 1).unwrap();
            let got = stepped.run_counted(&map, &one, 1).unwrap();
            assert!(expected.cells != initial, "{rounding:?} seed {seed}: moved");
            assert!(got.cells == expected.cells, "{rounding:?} seed {seed}");
            assert_eq!(got.work, expected.work, "{rounding:?} seed {seed}: steps");
        }
        // Many droplets, one per dispatch: in order, with no races, so still bit for bit.
        let many = DropletJob {
            params,
            ..default_job(300, 4)
        };
        let expected = paper.run(&map, &many, 1).unwrap();
        let got = stepped.run(&map, &many, 1).unwrap();
        assert_eq!(expected.dispatches, 300);
        assert!(got.cells == expected.cells, "{rounding:?}: 300 droplets");
    }
    assert_validation_clean(&ctx);
}
