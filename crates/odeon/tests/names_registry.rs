//! Actor names (`SpawnOptions::name`) and the local registry (`System::register`,
//! `lookup`, `unregister`, also through `SystemHandle` from inside handlers).

use std::sync::{Arc, Barrier};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, Context, Handler, Message, RegistryError, SpawnOptions, StopReason, System,
};

const HANG_GUARD: Duration = Duration::from_secs(10);

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped")
    })
}

struct Service;
impl Actor for Service {}

struct Other;
impl Actor for Other {}

/// Replies with the name the actor sees for itself.
struct WhoAmI;
impl Message for WhoAmI {
    type Reply = Option<String>;
}
impl Handler<WhoAmI> for Service {
    fn handle(&mut self, _: WhoAmI, cx: &mut Context<Self>) -> Option<String> {
        cx.name().map(str::to_owned)
    }
}

#[test]
fn a_name_is_reported_by_refs_the_context_and_debug() {
    let system = small_system();
    let named = system.spawn_with(Service, SpawnOptions::new().name("billing"));
    assert_eq!(named.name(), Some("billing"));
    assert_eq!(named.clone().name(), Some("billing"));
    assert_eq!(
        system.block_on(named.ask(WhoAmI)).unwrap().as_deref(),
        Some("billing")
    );
    let shown = format!("{named:?}");
    assert!(shown.contains("\"billing\""), "{shown}");
    assert!(shown.contains(&named.id().to_string()), "{shown}");

    let unnamed = system.spawn(Service);
    assert_eq!(unnamed.name(), None);
    assert_eq!(system.block_on(unnamed.ask(WhoAmI)).unwrap(), None);
    assert!(!format!("{unnamed:?}").contains('"'));
}

#[test]
fn names_combine_with_other_options() {
    let system = small_system();
    let opts = SpawnOptions::new().bounded(4).blocking().name("io");
    let actor = system.spawn_with(Service, opts);
    assert_eq!(actor.name(), Some("io"));
    assert_eq!(
        system.block_on(actor.ask(WhoAmI)).unwrap().as_deref(),
        Some("io")
    );
}

#[test]
fn register_lookup_unregister() {
    let system = small_system();
    let service = system.spawn(Service);
    assert!(system.lookup::<Service>("svc").is_none());
    system.register("svc", &service).unwrap();
    assert_eq!(system.lookup::<Service>("svc"), Some(service.clone()));
    assert_eq!(system.registered_names(), vec!["svc".to_string()]);
    // The registered ref works.
    let found = system.lookup::<Service>("svc").unwrap();
    assert_eq!(system.block_on(found.ask(WhoAmI)), Ok(None));

    assert!(system.unregister("svc"));
    assert!(system.lookup::<Service>("svc").is_none());
    assert!(!system.unregister("svc"), "nothing left to unregister");
    assert!(system.registered_names().is_empty());
    // Free again.
    system.register("svc", &service).unwrap();
    assert_eq!(system.lookup::<Service>("svc"), Some(service));
}

#[test]
fn a_lookup_with_the_wrong_type_finds_nothing() {
    let system = small_system();
    let service = system.spawn(Service);
    system.register("svc", &service).unwrap();
    assert!(system.lookup::<Other>("svc").is_none());
    assert!(system.lookup::<Service>("svc").is_some());
}

#[test]
fn a_taken_name_is_refused_even_for_the_same_actor() {
    let system = small_system();
    let first = system.spawn(Service);
    let second = system.spawn(Service);
    system.register("svc", &first).unwrap();
    assert_eq!(
        system.register("svc", &second),
        Err(RegistryError::NameTaken("svc".into()))
    );
    assert_eq!(
        system.register("svc", &first),
        Err(RegistryError::NameTaken("svc".into()))
    );
    // The first registration is untouched.
    assert_eq!(system.lookup::<Service>("svc"), Some(first.clone()));
    // One actor may hold several names.
    system.register("svc-2", &first).unwrap();
    assert_eq!(system.lookup::<Service>("svc-2"), Some(first));
}

#[test]
fn a_stopped_actor_frees_its_name() {
    let system = small_system();
    let first = system.spawn(Service);
    system.register("svc", &first).unwrap();
    first.stop();
    assert_eq!(wait_stopped(&system, &first), StopReason::Normal);
    assert!(system.lookup::<Service>("svc").is_none());
    assert!(system.registered_names().is_empty());
    let second = system.spawn(Service);
    system.register("svc", &second).unwrap();
    assert_eq!(system.lookup::<Service>("svc"), Some(second));
}

#[test]
fn a_stopped_actor_cannot_be_registered() {
    let system = small_system();
    let gone = system.spawn(Service);
    gone.stop();
    wait_stopped(&system, &gone);
    assert_eq!(
        system.register("gone", &gone),
        Err(RegistryError::Stopped(gone.id()))
    );
    assert!(system.lookup::<Service>("gone").is_none());
}

#[test]
fn the_registry_keeps_a_registered_actor_alive_until_unregistered() {
    let system = small_system();
    let service = system.spawn(Service);
    system.register("svc", &service).unwrap();
    let done = service.wait_stopped();
    drop(service);
    // Only the registry refers to it now: it is not collected...
    system.run_until_quiescent();
    let found = system
        .lookup::<Service>("svc")
        .expect("a registered actor lives");
    assert!(found.is_alive());
    drop(found);
    // ...until its name is unregistered; then it is collected as usual.
    assert!(system.unregister("svc"));
    let reason = system.block_on(async { tokio::time::timeout(HANG_GUARD, done).await });
    assert_eq!(reason, Ok(StopReason::Unreferenced));
    assert!(system.lookup::<Service>("svc").is_none());
}

#[test]
fn a_registered_actor_with_no_other_ref_stops_at_shutdown_and_frees_its_name() {
    let system = small_system();
    let service = system.spawn(Service);
    system.register("svc", &service).unwrap();
    let done = service.wait_stopped();
    drop(service);
    let handle = system.handle();
    assert!(system.shutdown());
    assert_eq!(futures_lite_block_on(done), StopReason::Shutdown);
    assert!(handle.lookup::<Service>("svc").is_none());
}

/// Polls a future to completion on this thread (the system is gone).
fn futures_lite_block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(HANG_GUARD, fut).await.unwrap() })
}

/// Finds its peer by name from inside a handler.
struct Caller;
impl Actor for Caller {}
struct CallPeer;
impl Message for CallPeer {
    type Reply = Option<Option<String>>;
}
impl odeon::AsyncHandler<CallPeer> for Caller {
    async fn handle(&mut self, _: CallPeer, cx: &mut Context<Self>) -> Option<Option<String>> {
        let peer = cx.system().lookup::<Service>("peer")?;
        peer.ask(WhoAmI).await.ok()
    }
}

#[test]
fn handlers_register_and_look_up_through_the_context() {
    /// Keeps its child referenced too.
    struct Registrar(Option<ActorRef<Service>>);
    impl Actor for Registrar {
        fn started(&mut self, cx: &mut Context<Self>) {
            let peer = cx.spawn_with(Service, SpawnOptions::new().name("the-peer"));
            cx.system().register("peer", &peer).unwrap();
            self.0 = Some(peer);
        }
    }
    let system = small_system();
    let registrar = system.spawn(Registrar(None));
    system.run_until_quiescent();
    let caller = system.spawn(Caller);
    assert_eq!(
        system.block_on(caller.ask(CallPeer)).unwrap(),
        Some(Some("the-peer".into()))
    );
    // Stopping the registrar stops its child, which frees the name.
    let peer = system.lookup::<Service>("peer").unwrap();
    registrar.stop();
    assert_eq!(wait_stopped(&system, &peer), StopReason::ParentStopped);
    assert_eq!(system.block_on(caller.ask(CallPeer)).unwrap(), None);
}

#[test]
fn racing_registrations_of_one_name_admit_exactly_one() {
    let system = small_system();
    let handle = system.handle();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let handle = handle.clone();
            let barrier = barrier.clone();
            let actor = system.spawn(Service);
            std::thread::spawn(move || {
                barrier.wait();
                let won = handle.register("leader", &actor).is_ok();
                (won, actor)
            })
        })
        .collect();
    let results: Vec<(bool, ActorRef<Service>)> =
        threads.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<_> = results.iter().filter(|(won, _)| *won).collect();
    assert_eq!(winners.len(), 1);
    assert_eq!(
        system.lookup::<Service>("leader").as_ref(),
        Some(&winners[0].1)
    );
}
