//! Instruction → 64-bit word.
//!
//! [`encode_raw`] places every field of the instruction's table entry (opcode, secondary
//! opcode, FAU page, flow, placeholder, destination, staging base/control/count, source bytes
//! and their modifiers, immediates, modifiers); it fails only when a value does not fit its
//! field, when a modifier is set on a source that has no such field, or when the sources need
//! two FAU pages. [`encode`] first requires [`Instr::validate`], so it succeeds exactly for
//! valid instructions.

use super::inst::{Instr, InstrError};

/// The error type of encoding (shared with validation).
pub type EncodeError = InstrError;

/// Encodes a valid instruction.
pub fn encode(instr: &Instr) -> Result<u64, EncodeError> {
    // `validate` is `check_invariants` followed by `encode_raw`: the word is that second step.
    instr.check_invariants()?;
    encode_raw(instr)
}

/// Encodes an instruction whose values fit their fields, reserved values included.
pub fn encode_raw(instr: &Instr) -> Result<u64, EncodeError> {
    let info = instr.info();
    let name = info.name;
    let fits = |what: &dyn Fn() -> String, value: u64, width: u8| {
        if value >> width == 0 {
            Ok(value)
        } else {
            Err(InstrError::DoesNotFit { instr: name, what: what(), value: value as i64 })
        }
    };
    let mut w = u64::from(info.primary) << 48;
    if let Some(s) = info.secondary {
        w |= u64::from(s.value) << s.shift;
    }
    w |= fits(&|| "flow".into(), instr.flow.into(), 4)? << 59;
    w |= fits(&|| "FAU page".into(), instr.fau_page()?.into(), 2)? << 57;
    if info.placeholder {
        w |= 0xC0 << 40;
    }
    if info.dest {
        w |= fits(&|| "destination register".into(), instr.dest.reg.into(), 6)? << 40;
        w |= fits(&|| "destination write mask".into(), instr.dest.mask.into(), 2)? << 46;
    }
    for (k, s) in info.staging.iter().enumerate() {
        let st = instr.staging[k];
        w |= fits(&|| format!("staging operand {k} base register"), st.base.into(), 6)? << s.base_start;
        w |= u64::from(s.control) << s.control_start;
        let count = if s.count_minus_one {
            if st.count == 0 {
                return Err(InstrError::DoesNotFit {
                    instr: name,
                    what: format!("staging operand {k} count"),
                    value: 0,
                });
            }
            st.count - 1
        } else {
            st.count
        };
        w |= fits(&|| format!("staging operand {k} count"), count.into(), 3)? << s.count_start;
    }
    for (k, s) in info.srcs.iter().enumerate() {
        let src = &instr.srcs[k];
        match src.base {
            super::Base::Register(r) | super::Base::Discard(r) => {
                fits(&|| format!("source {k} register"), r.into(), 6)?;
            }
            super::Base::Uniform(u) => {
                fits(&|| format!("source {k} uniform"), u.into(), 8)?;
            }
            super::Base::Immediate(i) => {
                fits(&|| format!("source {k} immediate index"), i.into(), 5)?;
            }
            super::Base::Special(sp) => {
                fits(&|| format!("source {k} special entry"), sp.entry.into(), 4)?;
                fits(&|| format!("source {k} special page"), sp.page.into(), 2)?;
            }
        }
        w |= u64::from(src.base.byte()) << (8 * s.slot);
        for (on, bit, what) in [(src.neg, s.neg, "neg"), (src.abs, s.abs, "abs"), (src.not, s.not, "not")] {
            match (on, bit) {
                (false, _) => {}
                (true, Some(bit)) => w |= 1 << bit,
                (true, None) => {
                    return Err(InstrError::NoSuch {
                        instr: name,
                        what: "source modifier",
                        name: format!("{what} on source {k}"),
                    });
                }
            }
        }
        for (value, field, what) in
            [(src.swizzle, s.swizzle, "swizzle"), (src.widen, s.widen, "widen"), (src.lane, s.lane, "lane")]
        {
            match field {
                Some(f) => w |= fits(&|| format!("source {k} {what}"), value.into(), f.width)? << f.start,
                None if value != 0 => {
                    return Err(InstrError::NoSuch {
                        instr: name,
                        what: "source modifier",
                        name: format!("{what} on source {k}"),
                    });
                }
                None => {}
            }
        }
    }
    for (k, f) in info.imms.iter().enumerate() {
        w |= fits(&|| format!("immediate `{}`", f.name), instr.imms[k].into(), f.width)? << f.start;
    }
    for (k, m) in info.mods.iter().enumerate() {
        w |= fits(&|| format!("modifier `{}`", m.key), instr.mods[k].into(), m.width)? << m.start;
    }
    Ok(w)
}
