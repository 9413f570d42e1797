//! The program a configuration runs and its bounds, built by its algorithm's registry entry,
//! and the rounds and costs the entries report beside the measured time.

use super::*;
use fabric::FabricSpec;
use fabric::algorithms::seidel::Setup;
use fabric::algorithms::{self, Algorithm, Input};

/// The registry's entry of a configuration's algorithm (None for traffic).
pub fn entry(cfg: &Config) -> Option<&'static Algorithm> {
    let Workload::Algorithm { name, .. } = &cfg.workload else { return None };
    Some(algorithms::find(name).expect("the algorithm passed validation"))
}

/// What building an algorithm's program takes from a configuration, `spec` its fabric
/// (None for traffic).
pub fn input<'a>(cfg: &'a Config, spec: &'a FabricSpec, seidel: Option<&'a Setup>) -> Option<Input<'a>> {
    let Workload::Algorithm { forwarding, root, kbcast, pmnb, dynamic, .. } = &cfg.workload else { return None };
    Some(Input {
        spec,
        root: NodeId(*root),
        forwarding: *forwarding,
        seed: cfg.seed,
        kbcast: kbcast.as_ref(),
        pmnb: pmnb.as_ref(),
        dynamic: dynamic.as_ref(),
        seidel,
    })
}

/// Build the program and its bounds for a configuration: its algorithm's, as the registry's
/// entry builds it, or the synthetic traffic.
pub fn program(cfg: &Config) -> (Box<dyn Program>, Bounds) {
    let spec = cfg.spec();
    let seidel = match (&cfg.cost, &cfg.workload) {
        (Some(c), Workload::Algorithm { root, .. }) => Some(c.setup(cfg.topology.clone(), &cfg.dims, cfg.nu, *root)),
        _ => None,
    };
    if let (Some(a), Some(i)) = (entry(cfg), input(cfg, &spec, seidel.as_ref())) {
        return (a.build)(&i);
    }
    let Workload::Traffic { broadcast_rate, forwarding, .. } = &cfg.workload else { unreachable!("an algorithm has its entry") };
    let mut t = Traffic::new(cfg.traffic_spec().unwrap(), spec.topology().nodes());
    if *broadcast_rate > 0.0 {
        t = t.with_broadcasts(*broadcast_rate, *forwarding);
    }
    (Box::new(t), Bounds::default())
}

/// The lower bound in rounds of a one-to-all broadcast the nodes forward (the entries that
/// say `rounds`) under wormhole or cut-through switching, where a worm reaches any node in
/// one round ([`fabric::algorithms::wormhole::lower_bound_rounds`]); None otherwise.
pub fn round_bound(cfg: &Config) -> Option<u64> {
    let Workload::Algorithm { forwarding: Forwarding::Node, root, .. } = &cfg.workload else { return None };
    if cfg.switching == router::Switching::StoreAndForward || !entry(cfg)?.rounds {
        return None;
    }
    Some(algorithms::wormhole::lower_bound_rounds(&cfg.spec().topology(), NodeId(*root), cfg.port_model.limit()))
}

/// The cost the algorithm's source predicts in cycles, where it gives one (`rd`: the notes'
/// T(z), [`fabric::algorithms::wormhole::notes_cost_cycles`]).
pub fn notes_cost_cycles(cfg: &Config) -> Option<u64> {
    entry(cfg)?.cost_cycles.map(|f| f(&cfg.spec()))
}

/// Build the fabric for a configuration.
pub fn build(cfg: &Config) -> (Fabric, Bounds) {
    let (prog, bounds) = program(cfg);
    (Fabric::new(&cfg.spec(), prog), bounds)
}

/// [`build`], stopping at the cycle it is in when the process is interrupted
/// ([`crate::interrupt`]): the fabric of `flitwave run` (the commands of many runs let
/// their runs finish).
pub(super) fn build_stoppable(cfg: &Config) -> (Fabric, Bounds) {
    let (mut f, bounds) = build(cfg);
    f.stop_when(crate::interrupt::flag());
    (f, bounds)
}

/// Can the run be split between `cfg.threads` threads? Only if its program's nodes keep no
/// shared state ([`fabric::Program::splits`]): synthetic traffic, and the broadcasts
/// (node- or router-forwarded) and personalized communication of the hypercube papers.
pub fn check_threads(cfg: &Config) -> Result<(), ConfigError> {
    if cfg.threads <= 1 || program(cfg).0.splits() {
        return Ok(());
    }
    let what = match &cfg.workload {
        Workload::Algorithm { name, .. } => name.clone(),
        Workload::Traffic { .. } => "this run".to_string(),
    };
    let split: Vec<&str> = algorithms::ALGORITHMS.iter().filter(|a| a.splits).map(|a| a.name).collect();
    Err(ConfigError::new(
        "threads",
        cfg.threads,
        format!(
            "1 for {what} (its program keeps state or results shared between nodes); runs split between threads: \
             --traffic and --algorithm {} (node- or router-forwarded alike)",
            split.join(", ")
        ),
    ))
}
