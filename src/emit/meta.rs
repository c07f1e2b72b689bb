//! The metadata written beside every blob (`shader.json`): everything a panfrost-style driver
//! (and the emulator) needs to run the code. docs/metadata.md documents every field.
//!
//! The compiler fills it; `tgsi2va emu` reads it to know where the variants start, what each
//! push-constant (FAU) word holds, how attributes, varyings and system values are laid out, and
//! which TGSI output each colour/depth/store corresponds to.

use serde::{Deserialize, Serialize};

/// Current version of the format; bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// Metadata of one compiled TGSI shader.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub format_version: u32,
    /// `vertex`, `fragment` or `compute`.
    pub stage: String,
    /// Arm's name of the target, e.g. `Mali-G57`.
    pub gpu: String,
    /// Valhall architecture major version: 9 or 10.
    pub arch: u32,
    /// The programs in the blob: `main` for fragment/compute; `position` and `varying` (and
    /// `position_no_psiz` when point size is written) for IDVS vertex shaders.
    pub variants: Vec<Variant>,
    /// The push-constant table: what the driver must place in each 32-bit FAU word.
    pub fau: Vec<FauWord>,
    /// Vertex attributes (vertex shaders).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<Attribute>,
    /// Varying record layout: vertex shader outputs or fragment shader inputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub varyings: Vec<Varying>,
    /// Non-varying outputs: fragment colour/depth/stencil/sample mask, vertex position and
    /// point size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
    /// How each declared system value (`SV[i]`) and special input reaches the shader.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_values: Vec<SystemValue>,
    /// Texture units sampled (TGSI sampler/view index, with the target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub textures: Vec<TextureBinding>,
    /// Constant buffers read with loads (table 0 indices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ubos: Vec<u32>,
    /// Shader storage buffers (table 6 indices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssbos: Vec<u32>,
    /// Images (table 5 indices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<u32>,
    /// Thread-local storage per thread, in bytes (spills, scratch arrays).
    pub tls_size: u32,
    /// Workgroup-local (shared) memory, in bytes.
    pub wls_size: u32,
    /// Compute workgroup size, when fixed by the shader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_size: Option<[u32; 3]>,
    pub flags: Flags,
}

/// One program inside the blob.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    /// Byte offset of the first instruction (128-byte aligned).
    pub offset: u32,
    /// Code size in bytes, without the zero padding.
    pub size: u32,
    /// 32 (r0–r15, r48–r63 only) or 64.
    pub work_registers: u32,
    /// Registers the hardware must preload (r48–r63).
    pub preload: Vec<u8>,
    pub stats: Stats,
}

/// Mesa's shader-db statistics of one variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub instructions: u32,
    pub cycles: f32,
    pub fma: f32,
    pub cvt: f32,
    pub sfu: f32,
    pub v: f32,
    pub t: f32,
    pub ls: f32,
    pub quadwords: u32,
    pub threads: u32,
    pub loops: u32,
    pub spills: u32,
    pub fills: u32,
}

/// What one FAU word holds. (No `deny_unknown_fields`: serde does not support it together with
/// `flatten`.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FauWord {
    /// FAU word index (0–127; word w is `u{w}`).
    pub word: u32,
    #[serde(flatten)]
    pub source: FauSource,
}

/// The source of a pushed word.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FauSource {
    /// Component `component` of `CONST[buffer][index]`.
    Constant { buffer: u32, index: u32, component: u32 },
    /// A value the driver computes, e.g. `viewport_scale` component 0.
    Sysval { name: String, component: u32 },
    /// A literal 32-bit value (a shader constant pushed to save a register).
    Literal { value: u32 },
}

/// A vertex attribute: `LD_ATTR*` index `index` of table 1 reads TGSI `register`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attribute {
    pub index: u32,
    pub register: String,
    /// Register format of the load: `f32` or `auto` (integer attributes).
    pub format: String,
    pub components: u32,
}

/// One 16-byte slot of the varying record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Varying {
    /// The TGSI register: `OUT[i]` in a vertex shader, `IN[i]` in a fragment shader.
    pub register: String,
    /// TGSI semantic, e.g. `GENERIC[0]`, `COLOR[1]`.
    pub semantic: String,
    /// Byte offset in the varying record.
    pub offset: u32,
    pub components: u32,
    /// `perspective`, `linear` (emulated with frag_w) or `flat`.
    pub interpolation: String,
    /// `center`, `centroid` or `sample`.
    pub location: String,
}

/// A non-varying output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// The TGSI register, e.g. `OUT[0]`.
    pub register: String,
    /// TGSI semantic, e.g. `COLOR[0]`, `POSITION`, `STENCIL`.
    pub semantic: String,
    /// `color` (`BLEND` to render target `rt`), `depth`, `stencil`, `sample_mask`,
    /// `position` (screen-space, see docs/metadata.md), `point_size`, `layer`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt: Option<u32>,
}

/// How a system value reaches the shader.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemValue {
    /// `SV[i]`, or the `IN[i]` of a fragment POSITION/FACE input.
    pub register: String,
    /// TGSI semantic, e.g. `THREAD_ID`, `VERTEXID`, `FACE`.
    pub semantic: String,
    /// `preload` (hardware registers, see docs/metadata.md), `sysval` (FAU words), or `special`
    /// (a varying special such as frag_z/frag_w).
    pub source: String,
}

/// A texture unit the shader samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextureBinding {
    pub unit: u32,
    /// TGSI target name, e.g. `2D`, `SHADOWCUBE`.
    pub target: String,
    /// SVIEW return type when declared (`FLOAT`, `SINT`, `UINT`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_type: Option<String>,
}

/// Properties a driver needs to program the pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flags {
    pub writes_depth: bool,
    pub writes_stencil: bool,
    pub writes_coverage: bool,
    pub can_discard: bool,
    /// Derivatives or implicit-LOD texturing: the descriptor's "requires helper threads".
    pub needs_helper_threads: bool,
    pub reads_frag_coord: bool,
    pub reads_face: bool,
    pub uses_barrier: bool,
    pub writes_point_size: bool,
    /// Early fragment tests forced by the shader (FS_EARLY_DEPTH_STENCIL).
    pub early_fragment_tests: bool,
    /// FBFETCH: the shader reads the tile buffer (`LD_TILE`), so the driver must keep the
    /// render targets' previous contents in the tile and order overlapping fragments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_tile_buffer: bool,
}

impl Metadata {
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    pub fn from_json(text: &str) -> Result<Metadata, String> {
        let meta: Metadata = serde_json::from_str(text).map_err(|e| format!("bad metadata: {e}"))?;
        if meta.format_version != FORMAT_VERSION {
            return Err(format!("metadata format version {} is not {FORMAT_VERSION}", meta.format_version));
        }
        Ok(meta)
    }

    /// The variant called `name`.
    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let meta = Metadata {
            format_version: FORMAT_VERSION,
            stage: "fragment".into(),
            gpu: "Mali-G57".into(),
            arch: 9,
            variants: vec![Variant {
                name: "main".into(),
                offset: 0,
                size: 64,
                work_registers: 32,
                preload: vec![60, 61],
                stats: Stats::default(),
            }],
            fau: vec![
                FauWord { word: 0, source: FauSource::Constant { buffer: 0, index: 3, component: 1 } },
                FauWord { word: 1, source: FauSource::Sysval { name: "viewport_scale".into(), component: 0 } },
                FauWord { word: 2, source: FauSource::Literal { value: 0x3f80_0000 } },
            ],
            outputs: vec![Output {
                register: "OUT[0]".into(),
                semantic: "COLOR".into(),
                kind: "color".into(),
                rt: Some(0),
            }],
            ..Metadata::default()
        };
        let text = meta.to_json();
        assert!(text.contains("\"kind\": \"constant\""), "{text}");
        assert_eq!(Metadata::from_json(&text).unwrap(), meta);
        assert!(Metadata::from_json("{}").is_err());
    }
}
