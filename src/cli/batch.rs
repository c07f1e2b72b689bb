//! Running one command over many inputs: directory expansion, parallel execution, results in
//! input order, a progress bar on terminals, the `N passed, N failed` summary and exit codes.
//!
//! Exit codes: 0 when every input passed, 1 when some input was rejected, 3 when none was
//! rejected but some were inconclusive (`verify`: the interpreter's step limit), 101 when
//! processing some input panicked (an internal error; the message names the input).

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;

/// What processing one input produced.
#[derive(Debug, Default)]
pub struct Outcome {
    pub passed: bool,
    /// Text for standard output (e.g. a listing).
    pub stdout: String,
    /// Text for standard error (diagnostics).
    pub stderr: String,
    /// Processing panicked: an internal error.
    pub internal_error: bool,
    /// Neither passed nor failed (not counted as either).
    pub inconclusive: bool,
}

impl Outcome {
    /// Passed, with nothing to print.
    pub fn pass_quiet() -> Outcome {
        Outcome { passed: true, ..Outcome::default() }
    }

    pub fn fail(stderr: String) -> Outcome {
        Outcome { passed: false, stderr, ..Outcome::default() }
    }
}

/// Expands the command-line inputs: files are taken as given (`-` is standard input),
/// directories are searched recursively for files ending in `.{extension}`, sorted by path.
pub fn collect_inputs(args: &[PathBuf], extension: &str) -> Result<Vec<PathBuf>, String> {
    Ok(collect_inputs_relative(args, extension)?.into_iter().map(|(path, _)| path).collect())
}

/// Like [`collect_inputs`], with each input's path relative to the directory argument it was
/// found under (its file name for a file argument): the name of its output under `--out-dir`.
pub fn collect_inputs_relative(args: &[PathBuf], extension: &str) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let mut inputs = Vec::new();
    for arg in args {
        if arg.is_dir() {
            let mut found = Vec::new();
            walk(arg, extension, &mut found).map_err(|e| format!("cannot read directory {}: {e}", arg.display()))?;
            if found.is_empty() {
                return Err(format!("no *.{extension} files found under {}", arg.display()));
            }
            for path in found {
                let relative = path.strip_prefix(arg).unwrap_or(&path).to_path_buf();
                inputs.push((path, relative));
            }
        } else {
            let relative = PathBuf::from(arg.file_name().unwrap_or(std::ffi::OsStr::new("stdin")));
            inputs.push((arg.clone(), relative));
        }
    }
    if inputs.is_empty() {
        return Err("no input files".to_string());
    }
    Ok(inputs)
}

fn walk(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, extension, out)?;
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads an input file (or standard input for `-`) as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "error: {} is not UTF-8 text (invalid byte at offset {})\n",
            display_name(path),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Prints `message` to standard error (ending the line if it does not) and fails: the end of
/// a single-input command that cannot go on.
pub fn failure(message: impl std::fmt::Display) -> ExitCode {
    let text = message.to_string();
    eprint!("{text}");
    if !text.ends_with('\n') {
        eprintln!();
    }
    ExitCode::FAILURE
}

/// Reads an input file (or standard input for `-`) as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| format!("error: cannot read standard input: {e}\n"))?;
        Ok(bytes)
    } else {
        std::fs::read(path).map_err(|e| format!("error: cannot read {}: {e}\n", path.display()))
    }
}

/// The name used for an input in messages.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") { "<stdin>".to_string() } else { path.display().to_string() }
}

/// Runs `job` on every input in parallel and prints each outcome in input order.
/// With `summary`, ends with `N passed, N failed` on standard output.
pub fn run<F>(inputs: &[PathBuf], summary: bool, job: F) -> ExitCode
where
    F: Fn(&Path) -> Outcome + Sync,
{
    let progress = (inputs.len() > 1 && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(inputs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}").unwrap_or(ProgressStyle::default_bar()),
        );
        bar
    });
    let mut tally = Tally::default();
    if let [input] = inputs {
        // One input runs on this thread: starting the worker pool would cost more than
        // compiling a typical shader.
        let outcome = run_guarded(input, &job);
        emit(&outcome);
        tally.record(&outcome);
    } else {
        let (sender, receiver) = mpsc::channel::<(usize, Outcome)>();
        std::thread::scope(|scope| {
            let job = &job;
            scope.spawn(move || {
                inputs.par_iter().enumerate().for_each_with(sender, |sender, (i, path)| {
                    let outcome = run_guarded(path, job);
                    let _ = sender.send((i, outcome));
                });
            });
            // Print in input order: hold results that arrive early until their turn.
            let mut pending = BTreeMap::new();
            let mut next = 0;
            for (i, outcome) in receiver {
                pending.insert(i, outcome);
                while let Some(outcome) = pending.remove(&next) {
                    if let Some(bar) = &progress {
                        bar.inc(1);
                        bar.set_message(display_name(&inputs[next]));
                        bar.suspend(|| emit(&outcome));
                    } else {
                        emit(&outcome);
                    }
                    tally.record(&outcome);
                    next += 1;
                }
            }
        });
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let Tally { passed, failed, inconclusive, internal } = tally;
    if summary && inconclusive > 0 {
        println!("{passed} passed, {failed} failed, {inconclusive} inconclusive");
    } else if summary {
        println!("{passed} passed, {failed} failed");
    }
    if internal {
        ExitCode::from(101)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else if inconclusive > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// Counts of outcomes so far, for the summary line and the exit code.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    inconclusive: usize,
    internal: bool,
}

impl Tally {
    fn record(&mut self, outcome: &Outcome) {
        if outcome.inconclusive {
            self.inconclusive += 1
        } else if outcome.passed {
            self.passed += 1
        } else {
            self.failed += 1
        }
        self.internal |= outcome.internal_error;
    }
}

fn emit(outcome: &Outcome) {
    if !outcome.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(outcome.stdout.as_bytes());
        let _ = out.flush();
    }
    if !outcome.stderr.is_empty() {
        let _ = std::io::stderr().lock().write_all(outcome.stderr.as_bytes());
    }
}

/// Runs one job, turning a panic into an internal-error outcome that names the input.
pub fn run_guarded<F>(path: &Path, job: &F) -> Outcome
where
    F: Fn(&Path) -> Outcome + Sync,
{
    match panic::catch_unwind(AssertUnwindSafe(|| job(path))) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let location = super::take_panic_location().unwrap_or_default();
            Outcome {
                passed: false,
                internal_error: true,
                inconclusive: false,
                stdout: String::new(),
                stderr: format!(
                    "error: internal error while processing {}: {message}{location}\n\
                     note: this is a bug in tgsi2va; please report it with the input file\n",
                    display_name(path)
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    /// A job keyed on the input's name: "ok" passes, "bad" fails, "maybe" is inconclusive,
    /// "boom" panics.
    fn job(path: &Path) -> Outcome {
        match path.to_str() {
            Some("ok") => Outcome::pass_quiet(),
            Some("bad") => Outcome::fail("rejected\n".to_string()),
            Some("maybe") => Outcome { inconclusive: true, ..Outcome::default() },
            _ => panic!("job asked to panic"),
        }
    }

    #[test]
    fn exit_codes_for_one_input_match_the_parallel_path() {
        for (name, code) in [
            ("ok", ExitCode::SUCCESS),
            ("bad", ExitCode::FAILURE),
            ("maybe", ExitCode::from(3)),
            ("boom", ExitCode::from(101)),
        ] {
            assert_eq!(run(&inputs(&[name]), false, job), code, "one input {name}");
            assert_eq!(run(&inputs(&[name, "ok"]), false, job), code, "{name} then ok");
        }
    }

    #[test]
    fn internal_error_outranks_failure_and_failure_outranks_inconclusive() {
        assert_eq!(run(&inputs(&["bad", "boom", "maybe"]), true, job), ExitCode::from(101));
        assert_eq!(run(&inputs(&["maybe", "bad"]), true, job), ExitCode::FAILURE);
    }

    #[test]
    fn tally_counts_each_kind() {
        let mut tally = Tally::default();
        for name in ["ok", "ok", "bad", "maybe"] {
            tally.record(&job(Path::new(name)));
        }
        assert_eq!((tally.passed, tally.failed, tally.inconclusive, tally.internal), (2, 1, 1, false));
        tally.record(&run_guarded(Path::new("boom"), &job));
        assert_eq!((tally.failed, tally.internal), (2, true));
    }
}
