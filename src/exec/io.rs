//! The input and output JSON formats shared by `tgsi2va interp`, `tgsi2va emu` and `verify`
//! (docs/exec-formats.md).
//!
//! Inputs: an object whose keys are TGSI register names (`"IN[0]"`, `"CONST[0][3]"`, `"SV[0]"`,
//! `"TEMP[2]"`), each an array of four per-lane `[x, y, z, w]` vectors or a single vector meaning
//! the same in every lane. A value is a JSON number (stored as the f32 nearest to it) or a string
//! `"0x…"` holding a 32-bit pattern. Optional keys: `"buffers"` (BUFFER index → array of 32-bit
//! words), `"textures"` (texture unit → [`Texture`]). Registers not given start at zero.
//!
//! Outputs: `{"outputs": {"OUT[0]": [[4 × "0x…"] × 4 lanes], …}, "killed": [lanes],
//! "buffers": {…}}`; buffers appear only when the shader declares some.

use super::image::Image;
use super::texture::Texture;
use super::{LANES, Lanes};
use crate::tgsi::ast::File;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;

/// A register named in the JSON formats. `CONST[n]` without a dimension means `CONST[0][n]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegKey {
    pub file: File,
    pub dimension: Option<u32>,
    pub index: u32,
}

impl RegKey {
    pub fn new(file: File, index: u32) -> RegKey {
        RegKey { file, dimension: (file == File::Const).then_some(0), index }
    }

    pub fn with_dimension(file: File, dimension: u32, index: u32) -> RegKey {
        RegKey { file, dimension: Some(dimension), index }
    }

    /// Parses `FILE[i]` or `FILE[d][i]` (file names as TGSI prints them, any case).
    pub fn parse(text: &str) -> Result<RegKey, String> {
        let bad = || format!("`{text}` is not a register name like IN[0] or CONST[0][3]");
        let open = text.find('[').ok_or_else(bad)?;
        let name = &text[..open];
        let file = File::ALL.into_iter().find(|f| f.name().eq_ignore_ascii_case(name)).ok_or_else(bad)?;
        let mut numbers = Vec::new();
        let mut rest = &text[open..];
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(bad)?;
            if !rest.starts_with('[') {
                return Err(bad());
            }
            numbers.push(rest[1..close].trim().parse::<u32>().map_err(|_| bad())?);
            rest = &rest[close + 1..];
        }
        match numbers[..] {
            [index] => Ok(RegKey::new(file, index)),
            [dimension, index] => Ok(RegKey::with_dimension(file, dimension, index)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for RegKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dimension {
            Some(d) => write!(f, "{}[{}][{}]", self.file.name(), d, self.index),
            None => write!(f, "{}[{}]", self.file.name(), self.index),
        }
    }
}

/// Everything a shader invocation quad reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    pub registers: BTreeMap<RegKey, Lanes>,
    pub buffers: BTreeMap<u32, Vec<u32>>,
    pub textures: BTreeMap<u32, Texture>,
    pub images: BTreeMap<u32, Image>,
}

impl Inputs {
    /// Parses the inputs JSON; errors name the offending key.
    pub fn from_json(text: &str) -> Result<Inputs, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("inputs are not valid JSON: {e}"))?;
        let object = value.as_object().ok_or("inputs must be a JSON object")?;
        let mut inputs = Inputs::default();
        for (key, value) in object {
            match key.as_str() {
                "buffers" => inputs.buffers = parse_buffers(value).map_err(|e| format!("\"buffers\": {e}"))?,
                "textures" => {
                    let map = value.as_object().ok_or("\"textures\" must be an object")?;
                    for (unit, tex) in map {
                        let unit: u32 = unit.parse().map_err(|_| format!("texture unit `{unit}` is not a number"))?;
                        let texture: Texture =
                            serde_json::from_value(tex.clone()).map_err(|e| format!("\"textures\".\"{unit}\": {e}"))?;
                        texture.validate().map_err(|e| format!("\"textures\".\"{unit}\": {e}"))?;
                        inputs.textures.insert(unit, texture);
                    }
                }
                "images" => inputs.images = super::image::parse_images(value)?,
                _ => {
                    let reg = RegKey::parse(key)?;
                    let lanes = parse_lanes(value).map_err(|e| format!("\"{key}\": {e}"))?;
                    inputs.registers.insert(reg, lanes);
                }
            }
        }
        Ok(inputs)
    }

    /// Serialises with every value as a `"0x…"` bit pattern, per lane.
    pub fn to_json(&self) -> String {
        let mut object = Map::new();
        for (reg, lanes) in &self.registers {
            object.insert(reg.to_string(), lanes_json(lanes));
        }
        if !self.buffers.is_empty() {
            object.insert("buffers".into(), buffers_json(&self.buffers));
        }
        if !self.textures.is_empty() {
            let textures: Map<String, Value> = self
                .textures
                .iter()
                .map(|(unit, t)| (unit.to_string(), serde_json::to_value(t).unwrap_or(Value::Null)))
                .collect();
            object.insert("textures".into(), Value::Object(textures));
        }
        if !self.images.is_empty() {
            object.insert("images".into(), super::image::images_json(&self.images));
        }
        pretty(&Value::Object(object))
    }

    /// The value of a register in every lane (zero when not given).
    pub fn register(&self, reg: RegKey) -> Lanes {
        self.registers.get(&reg).copied().unwrap_or_default()
    }
}

/// Everything a quad of invocations produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub outputs: BTreeMap<RegKey, Lanes>,
    /// Lanes that were killed (fragment shaders), ascending.
    pub killed: Vec<u32>,
    pub buffers: BTreeMap<u32, Vec<u32>>,
    /// Final image contents (little-endian words), per image unit.
    pub images: BTreeMap<u32, Vec<u32>>,
}

impl Outputs {
    pub fn to_json(&self) -> String {
        pretty(&self.to_value())
    }

    /// The outputs JSON as a value, for callers that add keys before printing it with
    /// [`pretty`].
    pub(crate) fn to_value(&self) -> Value {
        let outputs: Map<String, Value> = self.outputs.iter().map(|(r, l)| (r.to_string(), lanes_json(l))).collect();
        let mut object = Map::new();
        object.insert("outputs".into(), Value::Object(outputs));
        object.insert("killed".into(), json!(self.killed));
        if !self.buffers.is_empty() {
            object.insert("buffers".into(), buffers_json(&self.buffers));
        }
        if !self.images.is_empty() {
            object.insert("images".into(), buffers_json(&self.images));
        }
        Value::Object(object)
    }

    pub fn from_json(text: &str) -> Result<Outputs, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("outputs are not valid JSON: {e}"))?;
        let mut result = Outputs::default();
        let outputs = value.get("outputs").and_then(Value::as_object).ok_or("missing \"outputs\" object")?;
        for (key, lanes) in outputs {
            result.outputs.insert(RegKey::parse(key)?, parse_lanes(lanes).map_err(|e| format!("\"{key}\": {e}"))?);
        }
        if let Some(killed) = value.get("killed") {
            let killed = killed.as_array().ok_or("\"killed\" must be an array")?;
            for lane in killed {
                result.killed.push(lane.as_u64().filter(|&l| l < LANES as u64).ok_or("bad lane in \"killed\"")? as u32);
            }
        }
        if let Some(buffers) = value.get("buffers") {
            result.buffers = parse_buffers(buffers)?;
        }
        if let Some(images) = value.get("images") {
            result.images = parse_buffers(images).map_err(|e| format!("\"images\": {e}"))?;
        }
        Ok(result)
    }
}

/// Parses one 32-bit value: a JSON number (as f32) or a `"0x…"` bit pattern.
pub fn parse_word(value: &Value) -> Result<u32, String> {
    match value {
        Value::Number(n) => n.as_f64().map(|f| (f as f32).to_bits()).ok_or_else(|| format!("bad number {n}")),
        Value::String(s) => {
            let hex =
                s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).ok_or_else(|| format!("\"{s}\" is not 0x…"))?;
            u32::from_str_radix(hex, 16).map_err(|_| format!("\"{s}\" is not a 32-bit hex pattern"))
        }
        other => Err(format!("{other} is neither a number nor a \"0x…\" string")),
    }
}

fn parse_vec4(value: &Value) -> Result<[u32; 4], String> {
    let items = value.as_array().filter(|a| a.len() == 4).ok_or("expected [x, y, z, w]")?;
    let mut out = [0; 4];
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = parse_word(item)?;
    }
    Ok(out)
}

/// Either four per-lane vectors or one vector for all lanes.
fn parse_lanes(value: &Value) -> Result<Lanes, String> {
    let items = value.as_array().ok_or("expected an array")?;
    if items.len() == LANES && items.iter().all(Value::is_array) {
        let mut lanes = [[0; 4]; LANES];
        for (lane, item) in lanes.iter_mut().zip(items) {
            *lane = parse_vec4(item)?;
        }
        Ok(lanes)
    } else {
        Ok([parse_vec4(value)?; LANES])
    }
}

fn parse_buffers(value: &Value) -> Result<BTreeMap<u32, Vec<u32>>, String> {
    let map = value.as_object().ok_or("must be an object of index → [words]")?;
    let mut buffers = BTreeMap::new();
    for (index, words) in map {
        let index: u32 = index.parse().map_err(|_| format!("buffer index `{index}` is not a number"))?;
        let words = words.as_array().ok_or("buffer contents must be an array of words")?;
        buffers.insert(index, words.iter().map(parse_word).collect::<Result<_, _>>()?);
    }
    Ok(buffers)
}

fn hex(word: u32) -> Value {
    Value::String(format!("0x{word:08x}"))
}

fn lanes_json(lanes: &Lanes) -> Value {
    Value::Array(lanes.iter().map(|v| Value::Array(v.iter().map(|&w| hex(w)).collect())).collect())
}

fn buffers_json(buffers: &BTreeMap<u32, Vec<u32>>) -> Value {
    Value::Object(
        buffers.iter().map(|(i, w)| (i.to_string(), Value::Array(w.iter().map(|&x| hex(x)).collect()))).collect(),
    )
}

/// Pretty JSON with one lane vector per line (readable diffs in golden files).
pub(crate) fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    // Collapse the innermost 4-element arrays onto one line.
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find('[') {
        let (head, tail) = rest.split_at(start);
        out.push_str(head);
        match tail[1..].find(['[', ']']) {
            Some(i) if tail.as_bytes()[1 + i] == b']' => {
                let inner: String = tail[1..1 + i].split(',').map(str::trim).collect::<Vec<_>>().join(", ");
                out.push('[');
                out.push_str(&inner);
                out.push(']');
                rest = &tail[2 + i..];
            }
            _ => {
                out.push('[');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    text.clear();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_names() {
        assert_eq!(RegKey::parse("IN[0]").unwrap(), RegKey::new(File::Input, 0));
        assert_eq!(RegKey::parse("CONST[3]").unwrap(), RegKey::with_dimension(File::Const, 0, 3));
        assert_eq!(RegKey::parse("const[1][2]").unwrap().to_string(), "CONST[1][2]");
        assert_eq!(RegKey::parse("SV[1]").unwrap().to_string(), "SV[1]");
        assert!(RegKey::parse("FOO[1]").is_err());
        assert!(RegKey::parse("IN[x]").is_err());
        assert!(RegKey::parse("IN[1]]").is_err());
    }

    #[test]
    fn inputs_round_trip() {
        let text = r#"{
            "IN[0]": [[1, 2, 3, 4], [0.5, "0x7fc00000", -0.0, 1e30], [0,0,0,0], [1,1,1,1]],
            "CONST[0][3]": [0.25, 0, 0, "0xffffffff"],
            "buffers": {"0": [1, "0x10"]},
            "textures": {"2": {"dim": "cube", "width": 8, "height": 8}}
        }"#;
        let inputs = Inputs::from_json(text).unwrap();
        let in0 = inputs.register(RegKey::new(File::Input, 0));
        assert_eq!(in0[0], [1.0f32.to_bits(), 2.0f32.to_bits(), 3.0f32.to_bits(), 4.0f32.to_bits()]);
        assert_eq!(in0[1][1], 0x7fc0_0000);
        assert_eq!(in0[1][2], 0x8000_0000);
        let c3 = inputs.register(RegKey::with_dimension(File::Const, 0, 3));
        assert!(c3.iter().all(|v| v[3] == u32::MAX), "a single vector applies to every lane");
        assert_eq!(inputs.buffers[&0], vec![1.0f32.to_bits(), 0x10]);
        assert_eq!(Inputs::from_json(&inputs.to_json()).unwrap(), inputs);
    }

    #[test]
    fn outputs_round_trip_and_layout() {
        let mut outputs = Outputs::default();
        outputs.outputs.insert(RegKey::new(File::Output, 0), [[1, 2, 3, 4]; 4]);
        outputs.killed = vec![2];
        let text = outputs.to_json();
        assert!(text.contains(r#"["0x00000001", "0x00000002", "0x00000003", "0x00000004"]"#), "{text}");
        assert_eq!(Outputs::from_json(&text).unwrap(), outputs);
    }

    #[test]
    fn errors_name_the_key() {
        let err = Inputs::from_json(r#"{"IN[0]": [1, 2, 3]}"#).unwrap_err();
        assert!(err.contains("IN[0]"), "{err}");
        let err = Inputs::from_json(r#"{"IN[0]": ["0xZZ", 0, 0, 0]}"#).unwrap_err();
        assert!(err.contains("0xZZ"), "{err}");
        let err = Inputs::from_json(r#"{"textures": {"0": {"dim": "2d", "width": 99999}}}"#).unwrap_err();
        assert!(err.contains("width"), "{err}");
    }
}
