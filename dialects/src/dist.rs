//! `#fusion.dist<@mesh, [axes]>`: a typed view of the distribution encoding.

use crate::ffi;
use melior::{
    Context, StringRef,
    ir::{Attribute, AttributeLike, Type, r#type::RankedTensorType},
};

/// How one axis of a tensor is distributed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParallelType {
    Serial,
    DIDx,
    Stream,
    DIDy,
    DIDz,
}

impl ParallelType {
    fn from_raw(raw: i32) -> Self {
        match raw {
            0 => Self::Serial,
            1 => Self::DIDx,
            2 => Self::Stream,
            3 => Self::DIDy,
            4 => Self::DIDz,
            _ => unreachable!("fusion's ParallelType has no case {raw}"),
        }
    }

    const fn to_raw(self) -> i32 {
        match self {
            Self::Serial => 0,
            Self::DIDx => 1,
            Self::Stream => 2,
            Self::DIDy => 3,
            Self::DIDz => 4,
        }
    }

    /// The keyword the IR spells it with.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Serial => "serial",
            Self::DIDx => "didx",
            Self::Stream => "stream",
            Self::DIDy => "didy",
            Self::DIDz => "didz",
        }
    }

    /// The parallel types that place an axis over a mesh axis, in the order
    /// a resharding treats them.
    pub const DEVICE: [ParallelType; 3] =
        [ParallelType::DIDz, ParallelType::DIDy, ParallelType::DIDx];

    /// Whether the type splits an axis over devices (`didx`, `didy`, `didz`).
    pub const fn is_device(self) -> bool {
        matches!(self, Self::DIDx | Self::DIDy | Self::DIDz)
    }
}

/// A tensor's distribution: its mesh and one parallel type per axis.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dist {
    pub mesh: String,
    pub axes: Vec<ParallelType>,
    /// `k` of a `stream<k>` axis (k chunks, one per iteration); `None` when
    /// the stream axis takes one index per iteration, or there is none.
    pub stream_chunks: Option<i64>,
}

impl Dist {
    /// The distribution of a value of type `r#type`, if it is a tensor with a
    /// `#fusion.dist` encoding.
    pub fn of_type(r#type: Type) -> Option<Self> {
        let encoding = RankedTensorType::try_from(r#type).ok()?.encoding()?;
        Self::from_attribute(encoding)
    }

    /// Reads a `#fusion.dist` attribute; `None` for any other attribute.
    pub fn from_attribute(attribute: Attribute) -> Option<Self> {
        let raw = attribute.to_raw();
        // SAFETY: `raw` is a valid attribute; the getters are only called on a dist.
        unsafe {
            if !ffi::hirAttributeIsAFusionDist(raw) {
                return None;
            }
            let mesh = StringRef::from_raw(ffi::hirFusionDistAttrGetMesh(raw))
                .as_str()
                .expect("symbol names are UTF-8")
                .to_owned();
            let axes = (0..ffi::hirFusionDistAttrGetRank(raw))
                .map(|axis| ParallelType::from_raw(ffi::hirFusionDistAttrGetAxis(raw, axis)))
                .collect();
            let stream_chunks = Some(ffi::hirFusionDistAttrGetStreamChunks(raw)).filter(|&k| k > 0);
            Some(Self {
                mesh,
                axes,
                stream_chunks,
            })
        }
    }

    /// The attribute for this distribution.
    pub fn to_attribute<'c>(&self, context: &'c Context) -> Attribute<'c> {
        let axes: Vec<i32> = self.axes.iter().map(|axis| axis.to_raw()).collect();
        // SAFETY: the context outlives the attribute; `axes` lives through the call.
        unsafe {
            Attribute::from_raw(ffi::hirFusionDistAttrGet(
                context.to_raw(),
                StringRef::new(&self.mesh).to_raw(),
                axes.len() as isize,
                axes.as_ptr(),
                self.stream_chunks.unwrap_or(0),
            ))
        }
    }

    /// The axis of the given parallel type, if any.
    pub fn find(&self, parallel_type: ParallelType) -> Option<usize> {
        self.axes.iter().position(|&axis| axis == parallel_type)
    }

    /// The stream axis and how many iterations its loop runs, for a tensor
    /// of this shape: its chunk count, or one per index.
    pub fn stream(&self, shape: &[i64]) -> Option<(usize, i64)> {
        let axis = self.find(ParallelType::Stream)?;
        Some((axis, self.stream_chunks.unwrap_or(shape[axis])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register_all;

    #[test]
    fn round_trips_through_the_attribute() {
        let context = Context::new();
        register_all(&context);
        let dist = Dist {
            mesh: "tp".into(),
            axes: vec![
                ParallelType::Stream,
                ParallelType::DIDx,
                ParallelType::Serial,
            ],
            stream_chunks: None,
        };
        let attribute = dist.to_attribute(&context);
        assert_eq!(
            attribute.to_string(),
            "#fusion.dist<@tp, [stream, didx, serial]>"
        );
        assert_eq!(Dist::from_attribute(attribute), Some(dist));
    }

    #[test]
    fn a_chunked_stream_axis_round_trips() {
        let context = Context::new();
        register_all(&context);
        let dist = Dist {
            mesh: "tp".into(),
            axes: vec![ParallelType::DIDx, ParallelType::Stream],
            stream_chunks: Some(4),
        };
        let attribute = dist.to_attribute(&context);
        assert_eq!(
            attribute.to_string(),
            "#fusion.dist<@tp, [didx, stream<4>]>"
        );
        assert_eq!(Dist::from_attribute(attribute), Some(dist.clone()));
        assert_eq!(dist.stream(&[8, 1024]), Some((1, 4)));
        let plain = Dist {
            stream_chunks: None,
            ..dist
        };
        assert_eq!(plain.stream(&[8, 1024]), Some((1, 1024)));
    }

    #[test]
    fn reads_the_encoding_of_a_tensor_type() {
        let context = Context::new();
        register_all(&context);
        let r#type = Type::parse(
            &context,
            "tensor<2x3xf32, #fusion.dist<@m, [didx, serial]>>",
        )
        .unwrap();
        let dist = Dist::of_type(r#type).unwrap();
        assert_eq!(dist.mesh, "m");
        assert_eq!(dist.find(ParallelType::DIDx), Some(0));
        assert_eq!(
            Dist::of_type(Type::parse(&context, "tensor<2xf32>").unwrap()),
            None
        );
    }
}
