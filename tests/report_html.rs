//! `vkerode report DIR --html`: the page of a real tiny sweep on the default device,
//! opened in headless Chromium: it loads with no console message (the page has no
//! script, so any is an error or a blocked fetch), every image decodes, every chart is
//! an inline SVG, and a screenshot is taken; text from the config cannot inject markup;
//! bad input is refused with the file named and nothing written.

mod common;

use std::path::PathBuf;

use common::{browse, probe, results_dir, stderr, sweep_into, vkerode};

/// A description that would run a script, or load an image, if it were not escaped.
const HOSTILE: &str =
    "</pre></td><script>document.title='pwned'</script><img src=x onerror=alert(1)>";

fn config() -> String {
    format!(
        "name = \"page\"\ndescription = \"{HOSTILE}\"\n[fixed]\nsize = 64\ndroplets = 3000\n\
         [axes]\nworkgroup = [32, 64]\nvariant = [\"paper\", \"fast\"]\n[measure]\nwarmup = 1\n\
         min_reps = 10\nmax_reps = 12\ntarget_rel_iqr = 0.5\ntime_budget_s = 2\n"
    )
}

/// The sweep, with a chart picture beside it: (scratch folder, results folder).
fn swept(name: &str) -> (PathBuf, PathBuf) {
    let dir = common::scratch("report_html", name);
    let config_path = dir.join("page.toml");
    std::fs::write(&config_path, config()).unwrap();
    let root = dir.join("results");
    sweep_into(&config_path, &root, &[]);
    let results = results_dir(&root, "page");
    let plotted = common::plot(
        &results.join("points.csv"),
        "workgroup",
        &results.join("chart"),
        &[],
    );
    assert!(plotted.status.success(), "{}", stderr(&plotted));
    (dir, results)
}

#[test]
fn the_page_loads_in_chromium_with_every_image_and_chart_and_no_error() {
    let (dir, results) = swept("browser");
    let page = dir.join("report.html");
    let out = vkerode(&[
        "report",
        results.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        "--baseline",
        results.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();

    // Self-contained and escaped: nothing fetched, the description only as text.
    assert!(!html.contains("<script"), "the report has no script");
    assert!(html.contains("&lt;script&gt;document.title="), "escaped");
    for external in ["src=\"http", "href=\"http", "url(", "@import"] {
        assert!(!html.contains(external), "{external} in the page");
    }
    for section in [
        "Provenance",
        "Points",
        "Against the baseline",
        "Charts",
        "Pictures",
    ] {
        assert!(html.contains(&format!("<h2>{section}</h2>")), "{section}");
    }
    assert!(html.contains("data:image/png;base64,"), "chart.png inline");
    assert!(
        html.contains(">same<") || html.contains(">unclear<"),
        "verdicts"
    );
    let inline_svgs = html.matches("<figure><svg").count();
    assert_eq!(inline_svgs, 1, "one chart per numeric axis (workgroup)");

    // The page itself: a screenshot, and not one console message.
    let shot = dir.join("report.png");
    let (_, console) = browse(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400",
        ],
    );
    assert!(console.is_empty(), "console messages: {console:#?}");
    let shot_bytes = std::fs::read(&shot).expect("a screenshot");
    assert!(shot_bytes.starts_with(b"\x89PNG") && shot_bytes.len() > 10_000);

    // A probed copy: every image decoded, every chart there, no script ran.
    let found = probe(&page, &dir.join("probed.html"));
    let images = found["images"].as_u64().unwrap();
    assert!(images >= 1, "{found}");
    assert_eq!(found["decoded"].as_u64(), Some(images), "{found}");
    assert_eq!(found["svgs"].as_u64(), Some(inline_svgs as u64), "{found}");
    assert_eq!(
        found["scripts"].as_u64(),
        Some(1),
        "only the probe: {found}"
    );
    assert_ne!(found["title"], "pwned", "{found}");
    assert_eq!(
        found["text"], true,
        "the description shown as text: {found}"
    );
}

#[test]
fn bad_input_is_refused_naming_the_file_and_nothing_is_written() {
    let (dir, results) = swept("refusals");
    let page = dir.join("report.html");
    let run = |args: &[&str]| {
        let mut all = vec!["report", results.to_str().unwrap()];
        all.extend_from_slice(args);
        vkerode(&all)
    };

    // A folder for --html.
    let out = run(&["--html", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is a folder"), "{}", stderr(&out));

    // A picture that is not one.
    let fake = results.join("fake.png");
    std::fs::write(&fake, "not a png").unwrap();
    let out = run(&["--html", page.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("fake.png"), "{}", stderr(&out));
    std::fs::remove_file(&fake).unwrap();

    // A meta.json that is not one.
    let meta = results.join("meta.json");
    let good = std::fs::read(&meta).unwrap();
    std::fs::write(&meta, "{").unwrap();
    let out = run(&["--html", page.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("meta.json"), "{}", stderr(&out));
    std::fs::write(&meta, good).unwrap();

    // A baseline that is neither a folder nor a saved name.
    let out = run(&["--html", page.to_str().unwrap(), "--baseline", "no-such"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no-such"), "{}", stderr(&out));

    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("report"))
        .collect();
    assert!(leftovers.is_empty(), "nothing written: {leftovers:?}");
}
