//! Emulator errors: what went wrong, and where (variant, instruction index and text, lane).

use std::fmt;

/// The class of an emulation error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The blob or a variant's bounds are malformed.
    Blob,
    /// A word does not decode to an instruction (or uses a reserved encoding).
    Decode,
    /// The metadata is inconsistent or names something the emulator cannot provide.
    Metadata,
    /// The inputs are inconsistent with the shader (e.g. a buffer access beyond its size).
    Inputs,
    /// A flow rule was broken: a missing wait, a missing `.end`, a branch out of range, a
    /// missing `.reconverge`, ATEST/ZS_EMIT/BLEND ordering, a barrier rule.
    Flow,
    /// A register was read before anything wrote it (and it is not preloaded).
    Undefined,
    /// A fault the hardware would raise or leave undefined: unmapped or misaligned memory, a
    /// bad resource handle or descriptor, a staging count that does not match the operation.
    Fault,
    /// A defined instruction or mode whose semantics the emulator does not model.
    Unsupported,
    /// The step limit was reached (an infinite loop).
    Limit,
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Blob => "blob",
            ErrorKind::Decode => "decode",
            ErrorKind::Metadata => "metadata",
            ErrorKind::Inputs => "inputs",
            ErrorKind::Flow => "flow rule",
            ErrorKind::Undefined => "undefined value",
            ErrorKind::Fault => "fault",
            ErrorKind::Unsupported => "not modelled",
            ErrorKind::Limit => "step limit",
        }
    }
}

/// An emulation error. `Display` gives one line:
/// `flow rule: variant main, instruction 5 `FADD.f32 r0, r1, r2` (lane 2): …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmuError {
    pub kind: ErrorKind,
    pub message: String,
    /// The variant being run.
    pub variant: Option<String>,
    /// Index of the instruction (word offset / 8 within the variant).
    pub index: Option<usize>,
    /// Disassembly of that instruction.
    pub text: Option<String>,
    /// The lane, when the error concerns one.
    pub lane: Option<usize>,
}

impl EmuError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> EmuError {
        EmuError { kind, message: message.into(), variant: None, index: None, text: None, lane: None }
    }

    pub fn at(mut self, index: usize, text: impl Into<String>) -> EmuError {
        if self.index.is_none() {
            self.index = Some(index);
            self.text = Some(text.into());
        }
        self
    }

    pub fn lane(mut self, lane: usize) -> EmuError {
        if self.lane.is_none() {
            self.lane = Some(lane);
        }
        self
    }

    pub fn in_variant(mut self, name: &str) -> EmuError {
        if self.variant.is_none() {
            self.variant = Some(name.to_string());
        }
        self
    }
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind.name())?;
        let mut wrote = false;
        if let Some(v) = &self.variant {
            write!(f, "variant {v}")?;
            wrote = true;
        }
        if let Some(i) = self.index {
            if wrote {
                f.write_str(", ")?;
            }
            write!(f, "instruction {i}")?;
            if let Some(t) = &self.text {
                write!(f, " `{}`", t.trim_end())?;
            }
            wrote = true;
        }
        if let Some(l) = self.lane {
            write!(f, " (lane {l})")?;
            wrote = true;
        }
        if wrote {
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for EmuError {}

pub(crate) fn err<T>(kind: ErrorKind, message: impl Into<String>) -> Result<T, EmuError> {
    Err(EmuError::new(kind, message))
}
