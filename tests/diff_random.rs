//! Random-program differential testing: programs generated from the opcode table
//! (`common::tgsi_gen`) must compile, and the TGSI interpreter and the Valhall emulator must agree
//! on them (`tgsi2va::verify`) over several input seeds. Also runs the regression corpus
//! `tests/diff_cases/*.tgsi` (minimised programs that once failed).
//!
//! `PROPTEST_CASES=N` sets the number of programs per stage (default 200) and
//! `PROPTEST_RNG_SEED=S` the seed (default fixed, so CI runs the same programs); a failure prints the
//! minimised program text and the first mismatches, and proptest records its seed in
//! `tests/diff_random.proptest-regressions` so the next run tries it first.

mod common;

use common::tgsi_gen::{self, Case, Stage};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use tgsi2va::verify::{Options, verify};

/// Input sets per program.
const SEEDS: u32 = 3;

/// Verifies `text`; a panic in the compiler or an executor is a failure too.
fn check_text(text: &str) -> Result<(u64, u32), String> {
    std::panic::catch_unwind(|| verify_text(text)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panic: {message}"))
    })
}

fn verify_text(text: &str) -> Result<(u64, u32), String> {
    let options = Options { seeds: SEEDS, ..Options::default() };
    match verify(text, &options) {
        Ok(report) if report.passed() => Ok((report.compared, report.runs)),
        Ok(report) => {
            let mut message = format!("{} mismatches:\n", report.mismatches.len());
            for m in report.mismatches.iter().take(8) {
                message.push_str(&format!("  {m}\n"));
            }
            Err(message)
        }
        Err(e) => Err(format!("{e}")),
    }
}

fn check_case(case: &Case) -> Result<(), TestCaseError> {
    let text = tgsi_gen::render(case);
    check_text(&text).map(|_| ()).map_err(|e| TestCaseError::fail(format!("{e}\nprogram:\n{text}")))
}

/// Deterministic unless `PROPTEST_RNG_SEED` picks a seed: the default run (CI) always tries the
/// same programs, and a long run with another seed explores new ones.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x7467_7369);
    ProptestConfig { cases, max_shrink_iters: 2000, rng_seed: RngSeed::Fixed(seed), ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn vertex_programs_agree(case in tgsi_gen::case_strategy(Stage::Vert, 40)) {
        check_case(&case)?;
    }

    #[test]
    fn fragment_programs_agree(case in tgsi_gen::case_strategy(Stage::Frag, 40)) {
        check_case(&case)?;
    }

    #[test]
    fn compute_programs_agree(case in tgsi_gen::case_strategy(Stage::Comp, 40)) {
        check_case(&case)?;
    }
}

/// The regression corpus: every `tests/diff_cases/NAME.tgsi` verifies, except known bugs, which
/// have a `NAME.bug` note (the diagnosis) and must still fail — when one passes, the bug is fixed:
/// delete the note and the generator's exclusion that names the case
/// (`tests/common/tgsi_gen.rs`). Known bugs are only required to fail in builds with debug
/// assertions (an overflow panic is a wrap in release builds).
#[test]
fn regression_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diff_cases");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/diff_cases exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tgsi"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut problems = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("readable case");
        let known_bug = path.with_extension("bug").exists();
        match (check_text(&text), known_bug) {
            (Err(e), false) => problems.push(format!("{}: {e}", path.display())),
            (Ok(_), true) if cfg!(debug_assertions) => problems.push(format!(
                "{} now passes: remove its .bug note and the generator exclusion naming it",
                path.display()
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The generator reaches the opcodes it is meant to: over a fixed sample of rendered programs
/// every ALU opcode of the list appears (with a word boundary after its name), and so do the
/// constructs around them.
#[test]
fn generator_covers_the_opcode_table() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    for stage in [Stage::Vert, Stage::Frag, Stage::Comp] {
        let ops = tgsi_gen::alu_opcodes(stage);
        assert!(ops.len() > 100, "{stage:?}: only {} ALU opcodes", ops.len());
        assert_eq!(ops[0], tgsi2va::tgsi::opcodes::Opcode::Mov);
        let mut runner = TestRunner::deterministic();
        let strategy = tgsi_gen::case_strategy(stage, 40);
        let mut text = String::new();
        for _ in 0..600 {
            text.push_str(&tgsi_gen::render(&strategy.new_tree(&mut runner).expect("a case").current()));
        }
        let mut missing: Vec<&str> = ops
            .iter()
            .map(|op| op.name())
            .filter(|name| !text.contains(&format!(": {name} ")) && !text.contains(&format!(": {name}_SAT ")))
            .collect();
        missing.retain(|name| {
            !text.lines().any(|l| {
                l.trim_start().split(": ").nth(1).is_some_and(|i| i.trim_start().starts_with(&format!("{name} ")))
            })
        });
        assert!(missing.is_empty(), "{stage:?}: never generated: {missing:?}");
        let mut constructs =
            vec!["BGNLOOP", "BRK", "SWITCH", "CASE", "DEFAULT", "ELSE", "UARL ADDR[0].", "ARL", "ARR", "TEX", "SAMPLE"];
        constructs.extend(match stage {
            Stage::Frag => vec!["KILL_IF", "DEMOTE", "TXB"],
            Stage::Comp => vec!["LOAD", "STORE BUFFER[2]", "ATOM", "BARRIER"],
            Stage::Vert => vec!["CONT"],
        });
        for c in constructs {
            assert!(text.contains(c), "{stage:?}: never generated {c}");
        }
    }
}
