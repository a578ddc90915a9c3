// A strict TypeScript program using the client's types from an ES module.
import { type DeviceBody, Warren, WarrenError } from '@warren/client';

export async function onlineNames(warren: Warren): Promise<string[]> {
  const devices: DeviceBody[] = await warren.devices.list({ online: true });
  return devices.map((device) => device.name);
}

export function describe(error: unknown): string {
  return error instanceof WarrenError ? `${error.status} ${error.code}: ${error.detail}` : String(error);
}

// @ts-expect-error: the options are typed; a number is not a URL
new Warren({ url: 8080 });

export async function firstName(warren: Warren): Promise<number | undefined> {
  const [first] = await warren.devices.list();
  // @ts-expect-error: a device's name is a string (the contract's schema, through typebox)
  return first?.name;
}
