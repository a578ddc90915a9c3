// A strict TypeScript program using the client's types from CommonJS.
import type { DeviceBody, Warren } from '@warren/client';

export async function count(warren: Warren): Promise<number> {
  const devices: DeviceBody[] = await warren.devices.list();
  return devices.length;
}

export async function firstName(warren: Warren): Promise<number | undefined> {
  const [first] = await warren.devices.list();
  // @ts-expect-error: a device's name is a string (the contract's schema, through typebox)
  return first?.name;
}
