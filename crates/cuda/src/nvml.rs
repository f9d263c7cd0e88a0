//! What the management library (NVML, `libnvidia-ml.so.1`, shipped with the driver) says
//! about the device that the CUDA driver API does not: the driver's release number, the PCIe
//! link, MIG mode. Read once when the device is opened, for `cli doctor` and reports;
//! without NVML every field is unknown, and nothing else changes.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};

/// The device as NVML sees it; `None` where NVML could not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Management {
    /// The driver's release, e.g. "570.124.06".
    pub driver_release: Option<String>,
    /// The PCIe link now: (generation, lanes).
    pub pcie_link: Option<(u32, u32)>,
    /// The most the link can do: (generation, lanes).
    pub pcie_link_max: Option<(u32, u32)>,
    /// Whether MIG (multi-instance GPU) mode is on; `None` also where the GPU has no MIG.
    pub mig_enabled: Option<bool>,
}

/// `NVML_SUCCESS`.
const SUCCESS: c_int = 0;

type Init = unsafe extern "C" fn() -> c_int;
type DriverVersion = unsafe extern "C" fn(*mut c_char, c_uint) -> c_int;
type ByBusId = unsafe extern "C" fn(*const c_char, *mut *mut c_void) -> c_int;
type DeviceUint = unsafe extern "C" fn(*mut c_void, *mut c_uint) -> c_int;
type MigMode = unsafe extern "C" fn(*mut c_void, *mut c_uint, *mut c_uint) -> c_int;

/// Asks NVML about the device at `pci_bus_id` (as the CUDA driver gives it), looking for the
/// library where the CUDA driver was found and then where the loader finds it.
pub(crate) fn read(pci_bus_id: &str, cuda_library: &str) -> Management {
    let beside = cuda_library
        .rsplit_once('/')
        .map(|(dir, _)| format!("{dir}/libnvidia-ml.so.1"));
    let candidates = beside.into_iter().chain(["libnvidia-ml.so.1".to_owned()]);
    for path in candidates {
        // SAFETY: loading the driver's management library runs its initialisers, as every
        // NVML client does.
        if let Ok(library) = unsafe { libloading::Library::new(&path) } {
            return query(&library, pci_bus_id).unwrap_or_default();
        }
    }
    Management::default()
}

fn query(library: &libloading::Library, pci_bus_id: &str) -> Option<Management> {
    // SAFETY: NVML's entry points with these C signatures (nvml.h); the library outlives the
    // calls.
    unsafe {
        let init = *library.get::<Init>(b"nvmlInit_v2\0").ok()?;
        let shutdown = *library.get::<Init>(b"nvmlShutdown\0").ok()?;
        if init() != SUCCESS {
            return None;
        }
        let mut management = Management::default();
        if let Ok(version) = library.get::<DriverVersion>(b"nvmlSystemGetDriverVersion\0") {
            let mut buffer = [0 as c_char; 96];
            if version(buffer.as_mut_ptr(), buffer.len() as c_uint) == SUCCESS {
                let text = CStr::from_ptr(buffer.as_ptr())
                    .to_string_lossy()
                    .into_owned();
                management.driver_release = Some(text);
            }
        }
        let mut device: *mut c_void = std::ptr::null_mut();
        let bus = CString::new(pci_bus_id).ok()?;
        let found = library
            .get::<ByBusId>(b"nvmlDeviceGetHandleByPciBusId_v2\0")
            .is_ok_and(|f| f(bus.as_ptr(), &raw mut device) == SUCCESS);
        if found {
            let uint = |name: &[u8]| -> Option<u32> {
                let f = library.get::<DeviceUint>(name).ok()?;
                let mut value: c_uint = 0;
                (f(device, &raw mut value) == SUCCESS).then_some(value)
            };
            let link = |generation: &[u8], width: &[u8]| Some((uint(generation)?, uint(width)?));
            management.pcie_link = link(
                b"nvmlDeviceGetCurrPcieLinkGeneration\0",
                b"nvmlDeviceGetCurrPcieLinkWidth\0",
            );
            management.pcie_link_max = link(
                b"nvmlDeviceGetMaxPcieLinkGeneration\0",
                b"nvmlDeviceGetMaxPcieLinkWidth\0",
            );
            if let Ok(mig) = library.get::<MigMode>(b"nvmlDeviceGetMigMode\0") {
                let (mut current, mut pending) = (0, 0);
                if mig(device, &raw mut current, &raw mut pending) == SUCCESS {
                    management.mig_enabled = Some(current == 1);
                }
            }
        }
        shutdown();
        Some(management)
    }
}
