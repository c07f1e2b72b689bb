//! The TGSI reference interpreter: the ground truth every translation is checked against.
//!
//! [`run`] executes one quad — four invocations, lane bit 0 = x, bit 1 = y — of a vertex,
//! fragment or compute shader with the semantics of `tgsi.rst`, and returns the same
//! [`Outputs`] the Valhall emulator produces, plus an [`Accuracy`] for every output component
//! so that `verify` knows which components must match bit for bit and which only within a
//! bound (docs/interpreter.md is the specification; every semantic decision is listed there).
//!
//! Design:
//! * [`program`] checks the program once (the front end's checker, then the constructs the
//!   interpreter cannot give a meaning), matches the control-flow instructions with each other
//!   and lays out the register files;
//! * [`machine`] executes it with per-lane execution masks (structured control flow, kill and
//!   demote masks), one instruction at a time, in time linear in the program size per executed
//!   instruction, with a step limit against endless loops;
//! * [`alu`], [`tex`] and [`mem`] give the opcodes their meaning; [`value`] carries the
//!   accuracy of every component through the arithmetic;
//! * [`inputs`] generates deterministic seeded inputs for a program (used by the tests and by
//!   `verify`).
//!
//! Library code: nothing here panics on user input; every unsupported construct is an
//! [`InterpError`] naming it and its source position.

// Lanes and channels are indexed in parallel arrays throughout; index loops read best.
#![allow(clippy::needless_range_loop)]

mod alu;
pub mod inputs;
mod machine;
mod mem;
mod program;
mod tex;
pub mod value;

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::exec::LANES;
use crate::exec::io::{Inputs, Outputs, RegKey};
use crate::tgsi::ast::Program;
use std::collections::BTreeMap;

/// How exactly an executor must reproduce a component (docs/interpreter.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Accuracy {
    /// Bit-exact (a NaN matches any NaN: payloads are not specified).
    Exact,
    /// A float within this absolute distance of the interpreter's value (equal infinities and
    /// NaN against NaN also match).
    Within(f32),
    /// Any value: the semantics leave it open.
    Unconstrained,
}

impl Accuracy {
    pub fn from_err(err: f32) -> Accuracy {
        if err == 0.0 {
            Accuracy::Exact
        } else if err.is_finite() {
            Accuracy::Within(err)
        } else {
            Accuracy::Unconstrained
        }
    }

    /// Whether `other` (another executor's bits) agrees with `ours` under this accuracy.
    pub fn accepts(self, ours: u32, other: u32) -> bool {
        let (a, b) = (f32::from_bits(ours), f32::from_bits(other));
        match self {
            Accuracy::Unconstrained => true,
            Accuracy::Exact => ours == other || (a.is_nan() && b.is_nan()),
            Accuracy::Within(e) => {
                ours == other || (a.is_nan() && b.is_nan()) || ((a as f64) - (b as f64)).abs() <= e as f64
            }
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub outputs: Outputs,
    /// Per output register, per lane, per component: how it must be compared.
    pub accuracy: BTreeMap<RegKey, [[Accuracy; 4]; LANES]>,
    /// Per buffer, per word.
    pub buffer_accuracy: BTreeMap<u32, Vec<Accuracy>>,
    /// Per image unit, per 32-bit word of its contents.
    pub image_accuracy: BTreeMap<u32, Vec<Accuracy>>,
    /// Lanes whose whole result is unconstrained: they branched, killed, or addressed
    /// registers or memory on a value whose approximation could change the outcome. Compare
    /// neither their outputs nor whether they were killed.
    pub uncertain_lanes: Vec<u32>,
    /// Instructions executed (control flow included).
    pub steps: u64,
}

impl Run {
    /// The outputs JSON plus how each value must be compared (docs/exec-formats.md):
    /// `"accuracy"` per output, lane and component, `"buffer_accuracy"` and `"image_accuracy"`
    /// per word, and `"uncertain_lanes"`. Without it a placeholder for an unconstrained value
    /// reads like a result.
    pub fn to_json_with_accuracy(&self) -> String {
        use serde_json::Value;
        let word = |a: Accuracy| match a {
            Accuracy::Exact => Value::from("exact"),
            Accuracy::Within(e) => Value::from(f64::from(e)),
            Accuracy::Unconstrained => Value::from("any"),
        };
        let words = |map: &BTreeMap<u32, Vec<u32>>, accuracy: &BTreeMap<u32, Vec<Accuracy>>| -> Value {
            map.iter()
                .map(|(unit, contents)| {
                    let per_word = accuracy.get(unit);
                    let list = (0..contents.len())
                        .map(|i| word(per_word.and_then(|a| a.get(i)).copied().unwrap_or(Accuracy::Exact)))
                        .collect();
                    (unit.to_string(), Value::Array(list))
                })
                .collect::<serde_json::Map<String, Value>>()
                .into()
        };
        let mut value = self.outputs.to_value();
        if let Value::Object(object) = &mut value {
            let accuracy = self
                .outputs
                .outputs
                .keys()
                .map(|&reg| {
                    let lanes = (0..LANES)
                        .map(|l| Value::Array((0..4).map(|c| word(self.output_accuracy(reg, l, c))).collect()))
                        .collect();
                    (reg.to_string(), Value::Array(lanes))
                })
                .collect::<serde_json::Map<String, Value>>();
            object.insert("accuracy".into(), accuracy.into());
            if !self.outputs.buffers.is_empty() {
                object.insert("buffer_accuracy".into(), words(&self.outputs.buffers, &self.buffer_accuracy));
            }
            if !self.outputs.images.is_empty() {
                object.insert("image_accuracy".into(), words(&self.outputs.images, &self.image_accuracy));
            }
            object.insert("uncertain_lanes".into(), self.uncertain_lanes.clone().into());
        }
        crate::exec::io::pretty(&value)
    }

    /// The accuracy of one output component (`Exact` for registers the run did not produce).
    pub fn output_accuracy(&self, reg: RegKey, lane: usize, component: usize) -> Accuracy {
        self.accuracy.get(&reg).map_or(Accuracy::Exact, |a| a[lane & 3][component & 3])
    }
}

/// Options of a run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Executed instructions after which the run stops with [`InterpError::StepLimit`].
    pub step_limit: u64,
    /// Nesting depth of `CAL` after which the run stops with an error.
    pub call_depth_limit: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { step_limit: 1_000_000, call_depth_limit: 64 }
    }
}

/// Why a program cannot be run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// The front end's checker rejects the program.
    #[error("the program does not pass the checker: {0}")]
    Check(Diagnostics),
    /// A construct the interpreter gives no meaning (named, with its position).
    #[error("{message}")]
    Unsupported { message: String, span: Span },
    /// The step limit was reached (probably an endless loop).
    #[error("no END after {steps} executed instructions (the step limit); the last one was at byte {}", span.start)]
    StepLimit { steps: u64, span: Span },
    /// Something else the program does at run time that has no defined meaning.
    #[error("{message}")]
    Runtime { message: String, span: Span },
}

impl InterpError {
    pub(crate) fn unsupported(span: Span, message: impl Into<String>) -> InterpError {
        InterpError::Unsupported { message: message.into(), span }
    }

    pub(crate) fn runtime(span: Span, message: impl Into<String>) -> InterpError {
        InterpError::Runtime { message: message.into(), span }
    }

    /// The error as diagnostics (for rendering with the source text like `check` does).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            InterpError::Check(d) => d.0.clone(),
            InterpError::Unsupported { message, span } => vec![
                Diagnostic::error("E0400", *span, message.clone())
                    .with_label("not supported by the interpreter")
                    .with_note("docs/interpreter.md lists the unsupported constructs"),
            ],
            InterpError::StepLimit { steps, span } => vec![
                Diagnostic::error("E0401", *span, format!("no END after {steps} executed instructions"))
                    .with_label("the step limit was reached here")
                    .with_note("the program probably loops forever for these inputs"),
            ],
            InterpError::Runtime { message, span } => {
                vec![Diagnostic::error("E0402", *span, message.clone()).with_label("at run time")]
            }
        }
    }
}

/// Runs one quad of `program` on `inputs` with the default [`Options`].
pub fn run(program: &Program, inputs: &Inputs) -> Result<Run, InterpError> {
    run_with(program, inputs, &Options::default())
}

/// Runs one quad of `program` on `inputs`.
pub fn run_with(program: &Program, inputs: &Inputs, options: &Options) -> Result<Run, InterpError> {
    let prepared = program::Prepared::new(program)?;
    machine::Machine::new(&prepared, inputs, options)?.run()
}
