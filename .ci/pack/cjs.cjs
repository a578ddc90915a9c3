// The client from CommonJS, against a real server (WARREN_URL, WARREN_API_KEY).
const { Warren, WarrenError } = require('@warren/client');

(async () => {
  const warren = new Warren();
  const network = await warren.network.get();
  const devices = await warren.devices.list();
  let missing;
  try {
    await warren.devices.get('dev_doesnotexist');
  } catch (error) {
    missing = error instanceof WarrenError ? `${error.status} ${error.code}` : String(error);
  }
  console.log(JSON.stringify({ network: network.name, devices: devices.length, missing }));
})();
