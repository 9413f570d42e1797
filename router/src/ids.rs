//! Small typed indices. Everything in the model lives in flat vectors indexed by these.

use serde::{Deserialize, Serialize};

macro_rules! id {
    ($(#[$m:meta])* $name:ident($t:ty)) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $t);
        impl $name {
            /// The id as a vector index.
            #[inline(always)]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id!(
    /// A node: one router and the NIC of its processor. Router ids equal node ids.
    NodeId(u32)
);
id!(
    /// A port of one router: network ports first, then the NIC's injection/ejection channels.
    PortId(u8)
);
id!(
    /// A packet in flight (a slot of the fabric's packet table; slots are reused).
    PacketId(u32)
);

/// Marker for "no owner" in u32 owner fields.
pub const NONE: u32 = u32::MAX;
