//! The paper's loop is written twice: verbatim in glsl/droplet.comp's main(), and as
//! dropletStep() (glsl/include/droplet_step.glsl) for the kernels that keep a droplet
//! between dispatches. This pins the two to the same statements, so that an edit to one
//! cannot silently leave the other behind. (tests/stagger.rs checks the same on the
//! GPU, for the heights they leave.)

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

#[test]
fn droplet_step_is_the_papers_loop_body_statement_for_statement() {
    let paper = include_str!("../glsl/droplet.comp");
    let step = include_str!("../glsl/include/droplet_step.glsl");
    let loop_body = statements(block_after(
        paper,
        "for (int step = 0; step < MAX_LIFETIME; ++step)",
    ))
    .into_iter()
    .map(|s| s.replace("break;", "return false;"))
    .collect::<Vec<_>>();
    let mut function_body = statements(block_after(step, "bool dropletStep("));
    // The loop's last statement stops the droplet; the function's says whether it goes on.
    assert_eq!(
        function_body.pop().as_deref(),
        Some("return !(water < 0.01);")
    );
    function_body.push("if (water < 0.01) return false;".into());
    assert!(loop_body.len() > 20, "the loop was found: {loop_body:?}");
    assert_eq!(function_body, loop_body);
}
