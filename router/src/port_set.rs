//! Sets of output ports: the result of route computation, the branches of a multicast.

use bitflags::bitflags;

bitflags! {
    /// A set of a router's network output ports (bit `p` is port `p`), plus [`PortSet::LOCAL`] for
    /// ejection to the node's own NIC (the actual ejection channel is chosen by allocation).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct PortSet: u64 {
        /// Deliver to this node's NIC.
        const LOCAL = 1 << 63;
        const _ = !0;
    }
}

impl PortSet {
    /// The set holding one network port.
    #[inline(always)]
    pub const fn port(p: usize) -> PortSet {
        PortSet::from_bits_retain(1u64 << p)
    }
    /// Only the network ports of the set.
    #[inline(always)]
    pub fn network(self) -> PortSet {
        self.difference(PortSet::LOCAL)
    }
    /// Iterate the network ports in ascending order.
    #[inline]
    pub fn net_ports(self) -> impl Iterator<Item = usize> {
        bits(self.network().bits())
    }
    #[inline(always)]
    pub fn has_port(self, p: usize) -> bool {
        self.bits() & (1u64 << p) != 0
    }
}

/// Iterate the set bits of `m`, lowest first (port numbers of a port mask, VCs of a VC mask).
#[inline(always)]
pub(crate) fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(i)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn iterates_network_ports_only() {
        let s = PortSet::port(3) | PortSet::port(0) | PortSet::LOCAL;
        assert_eq!(s.net_ports().collect::<Vec<_>>(), vec![0, 3]);
        assert!(s.contains(PortSet::LOCAL));
        assert!(s.has_port(3) && !s.has_port(1));
    }
}
